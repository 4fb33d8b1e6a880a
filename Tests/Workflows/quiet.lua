-- -q prints only failures and the summary.
-- args: -q -k @
-- exit: 1
-- not-stdout: start
-- not-stdout: ok        
-- stderr: FAILED    broken
-- stdout: 1 succeeded, 1 failed in
operation { name = "fine", sh = "true" }
operation { name = "broken", sh = "false" }
