-- A finalizer still pending when the run ends runs at exit, as lua5.4 runs it.
-- exit: 0
-- stderr: finalized at exit
_G.keep = setmetatable({}, { __gc = function() io.stderr:write("finalized at exit\n") end })
operation { name = "a", run = function() end }
