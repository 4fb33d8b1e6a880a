-- A runtime error at the top level is a script error: exit 2, file:line, nothing runs.
-- exit: 2
-- stderr: taskrun: top_level_error.lua:6: attempt to call a nil value (global 'operatoin')
-- not-stdout: start
operation { name = "fine", sh = "true" }
operatoin { name = "typo" }
