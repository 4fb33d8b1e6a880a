-- photo-import.lua: the album import from WWDC 2015's "Best Practices for Progress
-- Reporting". Each photo is an operation whose progress is 90% download, 10% filter
-- (implicit composition: become_current / resign_current). The album's progress composes
-- the photos explicitly (add_child). Progress is the handle on the work: pausing the album
-- pauses every photo (a photo stops at its next sleep until resumed), and cancelling it
-- cancels every photo, with no wiring of handlers to operations.
--
--   taskrun examples/photo-import.lua              # import 6 photos (exit 0)
--   taskrun examples/photo-import.lua -- 10        # import 10
--   taskrun examples/photo-import.lua -- 6 cancel  # cancel the import half way (exit 1)
--
-- From a second terminal, while it runs: taskrun pause photo-import.lua, taskrun resume
-- photo-import.lua, or taskrun cancel photo-import.lua "photo 3" (see examples/remote-control.lua).

local count = tonumber(arg[1] or 6)
local cancel_half_way = arg[2] == "cancel"
local net = queue { name = "network", max_concurrent = 3 }

local album = progress { total = count, description = "Importing album", pausable = true }
local function percent() return math.floor(album.fraction * 100) end
album.on_pause = function() print(("  album paused at %d%%"):format(percent())) end
album.on_resume = function() print("  album resumed") end

local photos = {}
for i = 1, count do
  local bytes = 400000 + i * 150000
  local photo = operation { name = ("photo %d"):format(i), queue = net, run = function(op)
    local p = progress { total = 100 }

    p:become_current(90)                            -- the download is 90% of a photo
    local download = progress { total = bytes, kind = "file", file_operation = "downloading",
                                file_url = ("https://example.org/album/%d.heic"):format(i) }
    while download.completed < bytes do
      sleep(0.05)                                   -- a paused photo waits here
      download.completed = math.min(bytes, download.completed + 120000)
    end
    p:resign_current()

    p:become_current(10)                            -- the filter is the other 10%
    local filter = progress { total = 4, description = "Applying filter" }
    for step = 1, 4 do sleep(0.03); filter.completed = step end
    p:resign_current()
    return bytes
  end }
  album:add_child(photo.progress, 1)                -- explicit composition: the album holds the photos
  photos[i] = photo
end

operation { name = "controller", run = function()
  sleep(0.4)
  album:pause()                                     -- every photo pauses
  local at = percent()
  sleep(0.3)
  assert(percent() == at, "nothing moves while the album is paused")
  album:resume()
  if cancel_half_way then
    while album.fraction < 0.5 do sleep(0.05) end
    print(("  cancelling at %d%%"):format(percent()))
    album:cancel()                                  -- every unfinished photo is cancelled
  end
end }

operation { name = "report", after = photos, when = "finished", run = function()
  local bytes, cancelled = 0, 0
  for _, photo in ipairs(photos) do
    if photo.succeeded then bytes = bytes + photo.result end
    if photo.cancelled then cancelled = cancelled + 1 end
  end
  print(("  album: %s (%s), %.1f MB imported%s"):format(album.description, album.additional_description,
    bytes / 1e6, cancelled > 0 and (", %d photos cancelled"):format(cancelled) or ""))
end }
