-- Without -k, the first failure stops new operations; running ones finish; cleanup still runs.
-- args: -j2 @
-- exit: 1
-- stderr: FAILED    compile
-- stderr:     | compiling a.c
-- stderr:     | a.c:1: error: expected ';'
-- stdout: skipped   package: dependency 'compile' failed
-- stdout: cleaning up after the failure
-- stdout: ok        slow-but-running
-- stderr: Failures:
-- stderr:   compile: exited with status 1: echo compiling a.c; echo "a.c:1: error: expected ';'" >&2; exit 1
-- stdout: 2 succeeded, 1 failed, 1 skipped in
operation { name = "compile", sh = [[echo compiling a.c; echo "a.c:1: error: expected ';'" >&2; exit 1]] }
operation { name = "slow-but-running", sh = "sleep 0.3" }
operation { name = "package", after = { "compile" }, sh = "echo packaging" }
operation { name = "cleanup", after = { "compile" }, when = "failed",
  run = function() print("cleaning up after the failure") end }
