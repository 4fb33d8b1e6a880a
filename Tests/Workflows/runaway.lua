-- A runaway body is stopped by its timeout even inside pcall; other work keeps going.
-- args: -j3 @
-- exit: 1
-- stdout: ok        ticker
-- stderr: Failures:
-- stderr:   spin: timed out after 0.30 s
-- stderr:   hang: timed out after 0.30 s
operation { name = "spin", timeout = 0.3, run = function()
  while true do pcall(function() while true do end end) end
end }
operation { name = "ticker", run = function() for _ = 1, 3 do sleep(0.02) end end }
operation { name = "hang", timeout = 0.3, sh = "sleep 30" }
