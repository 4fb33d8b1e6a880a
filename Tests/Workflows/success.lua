-- Dependencies run first, results flow through wait, and the run exits 0.
-- args: -j4 @
-- exit: 0
-- stdout: start     fetch
-- stdout: ok        fetch (
-- stdout: build saw: fetched 3 files
-- stdout: ok        build (
-- stdout: Slowest: fetch
-- stdout: Critical path: fetch (
-- stdout: ) → build (
-- stdout: 2 succeeded in
local fetch = operation { name = "fetch", run = function() sleep(0.05) return 3 end }
operation { name = "build", after = { fetch }, run = function()
  print("build saw: fetched " .. fetch:wait() .. " files")
end }
