-- A dependency cycle is refused before anything runs, naming the cycle and where the name
-- that closes it was given.
-- exit: 2
-- stderr: taskrun: cycle.lua:6: dependency cycle: a -> c -> b -> a
-- not-stdout: start
operation { name = "a", after = { "c" }, sh = "true" }
operation { name = "b", after = { "a" }, sh = "true" }
operation { name = "c", after = { "b" }, sh = "true" }
