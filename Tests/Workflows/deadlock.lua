-- Waiting on an operation that waits on you fails the waiter with the cycle instead of hanging.
-- args: -j4 -k @
-- exit: 1
-- stderr: deadlock.lua:8: deadlock: 'b' waits for 'a', which waits for 'b'
local a, b
a = operation { name = "a", run = function() b:wait() end }
b = operation { name = "b", run = function()
  sleep(0.05); a:wait()
end }
