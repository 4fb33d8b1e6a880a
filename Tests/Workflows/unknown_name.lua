-- A name in `after` that no operation has is refused before anything runs, at the line that
-- gave it, with the closest names (names may be declared later, so it is found at the end).
-- exit: 2
-- stderr: taskrun: unknown_name.lua:8: 'deploy' depends on 'biuld', but no operation has that name; did you mean 'build'?
-- not-stdout: start
operation { name = "build", sh = "true" }
operation { name = "test", after = "build", sh = "true" }
operation { name = "deploy", after = { "test", "biuld" }, sh = "true" }
