-- remote-control.lua: a run you pause, resume and cancel from a second terminal, as Finder
-- cancels a download Safari publishes. Every run answers on a private control socket;
-- `taskrun status` lists this user's runs, `taskrun watch` shows one's live view, and
-- `taskrun pause|resume|cancel RUN [OPERATION]` reach an operation through its progress
-- (RUN is the pid taskrun status shows, or the script's name).
--
--   terminal 1:  taskrun examples/remote-control.lua
--   terminal 2:  taskrun status
--                taskrun pause remote-control.lua transcode   # its commands stop (state T)
--                taskrun watch remote-control.lua             # "paused" beside transcode
--                taskrun resume remote-control.lua transcode
--                taskrun cancel remote-control.lua upload     # through upload's progress
--                taskrun pause remote-control.lua             # the whole run: nothing starts
--
--   taskrun examples/remote-control.lua -- 0.05   # the same, 20 times faster (exit 0)

local step = tonumber(arg[1] or 1)   -- seconds per unit of work

-- A command whose output reports its progress ("3/20"): pausing it stops its processes.
operation { name = "transcode", desc = "a long command, paused and resumed as a whole",
  sh = { "sh", "-c", 'for i in $(seq 1 20); do sleep "$1"; echo "$i/20"; done', "sh", tostring(step) },
  progress = "(%d+)/(%d+)" }

-- A Lua body with a file progress: paused, it stops at its next sleep.
operation { name = "upload", desc = "a Lua body that uploads in steps", run = function(op)
  local file = progress { total = 50e6, kind = "file", file_operation = "copying", file_url = "file:///tmp/movie.mov" }
  file:set_user_info("destination", "archive")
  for i = 1, 20 do
    sleep(step)
    file.completed = i * 2.5e6
  end
end, cleanup = function(op, why)
  print(("upload %s: removing the partial copy"):format(why))
end }

operation { name = "publish", after = { "transcode", "upload" }, when = "finished", run = function()
  print("published what finished")
end }
