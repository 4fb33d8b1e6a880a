-- Targets run with their transitive dependencies only; arguments after -- arrive in arg.
-- args: @ test -- fast verbose
-- exit: 0
-- stdout: arguments: targets.lua fast verbose
-- stdout: ok        build
-- stdout: ok        test
-- not-stdout: docs
-- stdout: 2 succeeded in
print("arguments: " .. arg[0] .. " " .. table.concat(arg, " "))
operation { name = "build", sh = "true" }
operation { name = "test", after = { "build" }, sh = "true" }
operation { name = "docs", sh = "echo should not run" }
