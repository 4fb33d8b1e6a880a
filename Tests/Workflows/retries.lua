-- A flaky command is retried; each attempt shows in the report.
-- args: @
-- exit: 0
-- stdout: start     flaky
-- stdout: retry     flaky: attempt 1 failed: exited with status 1:
-- stdout: start     flaky (attempt 2)
-- stdout: ok        flaky
local marker = os.tmpname()
os.remove(marker)
operation { name = "flaky", retry = { max = 2, delay = 0.05 },
  sh = ("test -e %s || { touch %s; exit 1; }"):format(marker, marker) }
operation { name = "cleanup", after = { "flaky" }, when = "finished", sh = { "rm", "-f", marker } }
