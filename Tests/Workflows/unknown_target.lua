-- An unknown target is a usage error with a suggestion, and nothing runs.
-- args: @ tets
-- exit: 2
-- stderr: taskrun: unknown_target.lua: unknown target 'tets'; did you mean 'test'?
-- not-stdout: ran
operation { name = "test", run = function() print("ran") end }
