-- -n prints the plan in execution order and runs nothing.
-- args: -n @ package
-- exit: 0
-- stdout: Plan (3 operations, in execution order):
-- stdout: 1. fetch — sh: curl -fsS https://example.org/src.tar.gz [queue net]
-- stdout: 2. build — sh: make -j4 [after fetch]
-- stdout: 3. package — lua function [after build]
-- not-stdout: docs
-- not-stdout: packaging
local net = queue { name = "net", max_concurrent = 2 }
operation { name = "fetch", queue = net, sh = "curl -fsS https://example.org/src.tar.gz" }
operation { name = "build", after = { "fetch" }, sh = "make -j4" }
operation { name = "package", after = { "build" }, run = function() print("packaging") end }
operation { name = "docs", sh = "make docs" }
