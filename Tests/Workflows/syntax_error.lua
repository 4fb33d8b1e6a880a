-- A syntax error is a script error (exit 2) with file:line; nothing runs.
-- exit: 2
-- stderr: taskrun: syntax_error.lua:7: '}' expected (to close '{' at line 6) near 'operation'
-- not-stdout: start
operation { name = "fine", sh = "true" }
operation { name = "broken", sh = "true"
operation { name = "after" }
