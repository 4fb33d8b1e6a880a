-- --progress none shows no progress, but failures (on stderr, as make does) and the summary.
-- args: --progress none -k @
-- exit: 1
-- not-stdout: ok        
-- not-stdout: start
-- stderr: FAILED    bad (
-- stderr:     | oops
-- stderr: Failures:
-- stderr:   bad: exited with status 2
-- stdout: 1 succeeded, 1 failed in
operation { name = "good", sh = "true" }
operation { name = "bad", sh = "echo oops; exit 2" }
