-- A name in `after` that the run resolves only when the script waits for it is refused at
-- the line that gave it, not at the wait's.
-- exit: 2
-- stderr: taskrun: unknown_name_wait.lua:6: 'x' depends on 'nope', but no operation has that name
-- not-stdout: start
local x = operation { name = "x", after = "nope", sh = "true" }

x:wait()
