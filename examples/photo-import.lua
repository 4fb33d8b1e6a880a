-- photo-import.lua: the album import from WWDC 2015's "Best Practices for Progress
-- Reporting". Each photo is an operation whose progress is 90% download, 10% filter
-- (implicit composition: become_current / resign_current). The album's progress composes
-- the photos explicitly (add_child) and is paused, resumed and, on request, cancelled from
-- Lua; cancelling it cancels every photo.
--
--   taskrun examples/photo-import.lua              # import 6 photos (exit 0)
--   taskrun examples/photo-import.lua -- 10        # import 10
--   taskrun examples/photo-import.lua -- 6 cancel  # cancel the import half way (exit 1)

local count = tonumber(arg[1] or 6)
local cancel_half_way = arg[2] == "cancel"
local net = queue { name = "network", max_concurrent = 3 }

local album = progress { total = count, description = "Importing album", pausable = true }
local paused = false
local function percent() return math.floor(album.fraction * 100) end
album.on_pause = function() paused = true; print(("  album paused at %d%%"):format(percent())) end
album.on_resume = function() paused = false; print("  album resumed") end

-- Waits while the album is paused: a download that honours pause().
local function wait_if_paused()
  while paused do sleep(0.05) end
end

local photos = {}
for i = 1, count do
  local bytes = 400000 + i * 150000
  local photo = operation { name = ("photo %d"):format(i), queue = net, run = function(op)
    local p = progress { total = 100 }

    p:become_current(90)                            -- the download is 90% of a photo
    local download = progress { total = bytes, kind = "file", file_operation = "downloading",
                                file_url = ("https://example.org/album/%d.heic"):format(i) }
    while download.completed < bytes do
      wait_if_paused()
      sleep(0.05)
      download.completed = math.min(bytes, download.completed + 120000)
    end
    p:resign_current()

    p:become_current(10)                            -- the filter is the other 10%
    local filter = progress { total = 4, description = "Applying filter" }
    for step = 1, 4 do sleep(0.03); filter.completed = step end
    p:resign_current()
    return bytes
  end }
  album:add_child(photo.progress, 1)                -- explicit composition
  photo.progress.on_cancel = function() photo:cancel("import cancelled") end
  photos[i] = photo
end

operation { name = "controller", run = function()
  sleep(0.4)
  album:pause()
  sleep(0.3)
  album:resume()
  if cancel_half_way then
    while album.fraction < 0.5 do sleep(0.05) end
    print(("  cancelling at %d%%"):format(percent()))
    album:cancel()
  end
end }

operation { name = "report", after = photos, when = "finished", run = function()
  local bytes = 0
  for _, photo in ipairs(photos) do
    if photo.succeeded then bytes = bytes + photo.result end
  end
  print(("  album: %s (%s), %.1f MB imported%s"):format(album.description, album.additional_description,
    bytes / 1e6, album.cancelled and ", cancelled" or ""))
end }
