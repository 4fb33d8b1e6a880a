-- app-launch.lua: the launch graph of the WWDC app from WWDC 2015's "Advanced
-- NSOperations" talk. Download the config, check the app version, fetch news and
-- the schedule in parallel on a throttled "network" queue, process favorites,
-- feedback and videos, then save. An alert op runs only if a download failed.
--
--   taskrun examples/app-launch.lua              # the happy path (exit 0)
--   taskrun -n examples/app-launch.lua           # print the plan, run nothing
--   taskrun -n examples/app-launch.lua videos    # the plan for one target
--   taskrun examples/app-launch.lua -- offline   # the schedule fails: the alert shows
--   taskrun -k examples/app-launch.lua -- offline   # ... and dependents are skipped

local offline = arg[1] == "offline"
local network = queue { name = "network", max_concurrent = 2 }
local cache = os.tmpname()   -- a fresh unique name; the config step makes it a directory
os.remove(cache)

local function older(a, b)   -- dotted versions, numerically: "2.9" is older than "2.10"
  local a1, a2 = a:match("^(%d+)%.(%d+)")
  local b1, b2 = b:match("^(%d+)%.(%d+)")
  return tonumber(a1) < tonumber(b1) or (a1 == b1 and tonumber(a2) < tonumber(b2))
end

-- Stands in for an HTTP request: wait, then store the payload in the cache.
local function download(what, seconds, items)
  sleep(seconds)
  if offline and what == "schedule" then error("The Internet connection appears to be offline.") end
  local file = assert(io.open(cache .. "/" .. what .. ".json", "w"))
  file:write(string.format('{"%s": %d}\n', what, items))
  file:close()
  print(string.format("  downloaded %-8s %3d items", what, items))
  return items
end

local config = operation { name = "download config", queue = network, timeout = 5,
  run = function()
    sh { "mkdir", "-p", cache }
    sleep(0.3)
    return { min_version = "2.9", today = sh("date -u +%F").stdout:gsub("%s+$", "") }
  end }

local version = operation { name = "version check", after = { config }, run = function()
  local have, need = "2.10", config.result.min_version
  if older(have, need) then error("app " .. have .. " is too old; " .. need .. " required") end
  print(string.format("  app %s >= %s, config of %s", have, need, config.result.today))
end }

local news = operation { name = "download news", after = { version }, queue = network,
  timeout = 5, run = function() return download("news", 0.4, 12) end }
local schedule = operation { name = "download schedule", after = { version },
  queue = network, timeout = 5, run = function() return download("schedule", 0.6, 104) end }

local function process(name, seconds, share, priority)
  return operation { name = name, after = { schedule }, priority = priority, run = function()
    sleep(seconds)
    local count = math.floor(schedule.result * share)
    print(string.format("  %-9s %d sessions", name, count))
    return count
  end }
end
local favorites = process("favorites", 0.2, 0.05, "high")
local feedback = process("feedback", 0.3, 0.25, "low")
local videos = process("videos", 0.4, 0.9)

local save = operation { name = "save", after = { news, favorites, feedback, videos },
  run = function()
    sleep(0.1)
    local bytes = sh("cat " .. cache .. "/*.json | wc -c").stdout:match("%d+")
    print(string.format("  saved %s bytes; %d favorites", bytes, favorites.result))
  end }

operation { name = "alert", after = { config, version, news, schedule }, when = "failed", run = function(op)
  for _, dep in ipairs(op.dependencies) do
    if dep.failed then print("  ALERT: unable to " .. dep.name .. ": " .. dep.error) end
  end
end }

operation { name = "clear cache", after = { save }, when = "finished", sh = { "rm", "-rf", cache } }
