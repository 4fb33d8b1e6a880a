-- wwdc-app.lua: the WWDC app's operations with the Advanced NSOperations vocabulary.
-- Saving favourites needs a login (a condition whose dependency logs in first); alerts
-- are mutually exclusive (one on screen at a time); downloads count in a "network"
-- activity indicator and are retried; the feedback upload finishes in the background on
-- Ctrl-C; an observer logs what the sync operation produces.
--
--   taskrun examples/wwdc-app.lua                 # logs in, then saves (exit 0)
--   taskrun examples/wwdc-app.lua -- logged-out   # the login is refused: save fails, an alert shows (exit 1)
--   taskrun -k examples/wwdc-app.lua -- flaky     # a download fails twice, then works

local mode = arg[1]
local state = os.tmpname()          -- stands for the app's keychain and caches
os.remove(state)
local network = queue { name = "network", max_concurrent = 2 }
local attempts = 0

local logged_in = condition { name = "logged in",
  dependency = function()
    return operation { name = "login", queue = network, observers = { activity "network" }, run = function()
      sleep(0.3)
      if mode == "logged-out" then error("the account was refused") end
      sh { "mkdir", "-p", state }
      sh { "touch", state .. "/token" }
    end }
  end,
  evaluate = function() return sh({ "test", "-e", state .. "/token" }, { check = false }).status == 0, "no token" end }

local function alert(name, text, after)
  return operation { name = name, after = after, when = "failed", conditions = { mutex "alert" },
    run = function(op)
      print("  ALERT: " .. text)
      sleep(0.2)                     -- the alert stays up; a second one waits for it
    end }
end

local function download(name, seconds)
  return operation { name = name, queue = network, retry = { max = 2, delay = 0.1 },
    observers = { activity "network", timeout(5) }, run = function()
      sleep(seconds)
      if mode == "flaky" and name == "download videos" then
        attempts = attempts + 1
        if attempts < 3 then error("connection reset (attempt " .. attempts .. ")") end
      end
      return seconds * 100
    end }
end

local sessions = download("download sessions", 0.4)
local videos = download("download videos", 0.3)

local save = operation { name = "save favorites", after = { sessions }, conditions = { logged_in },
  run = function() sleep(0.1) print("  favourites saved") end }

operation { name = "upload feedback", after = { save }, observers = { background(10), activity "network" },
  run = function() sleep(0.3) print("  feedback uploaded") end }

local sync = operation { name = "sync", after = { videos }, observers = {
    observer { on_produce = function(op, new) print("  " .. op.name .. " produced " .. new.name) end } },
  run = function()
    for _, kind in ipairs { "thumbnails", "captions" } do
      operation { name = "fetch " .. kind, queue = network, run = function() sleep(0.1) end }
    end
  end }

alert("alert: save failed", "could not save your favourites", { save })
alert("alert: sync failed", "could not sync the videos", { sync })

operation { name = "clean up", after = { "alert: save failed", "alert: sync failed" }, when = "finished",
  sh = { "rm", "-rf", state } }
