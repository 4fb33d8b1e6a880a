-- benchmarks/progress.lua: the cost of progress updates from Lua.
--   taskrun -q benchmarks/progress.lua -- [N]
-- Times N iterations of a bare loop, of a loop that sets a local counter through a table
-- field, and of a loop that sets progress.completed (an implicit child of the operation's
-- progress, as a body would), and prints nanoseconds per iteration.
local n = tonumber(arg[1] or 1000000)
operation { name = "updates", run = function()
  local function time(label, body)
    local start = os.clock()
    body()
    local ns = (os.clock() - start) / n * 1e9
    print(("%-34s %7.1f ns/iteration"):format(label, ns))
    return ns
  end
  local bare = time("bare loop (x = i)", function() local x = 0 for i = 1, n do x = i end end)
  local t = { completed = 0 }
  local field = time("plain table field", function() for i = 1, n do t.completed = i end end)
  local p = progress { total = n }
  local update = time("progress.completed = i", function() for i = 1, n do p.completed = i end end)
  local increment = time("p.completed = p.completed + 1", function()
    p.completed = 0
    for _ = 1, n do p.completed = p.completed + 1 end
  end)
  print(("progress update vs table field: %.1fx; increment (read + write) %.1fx"):format(update / field, increment / field))
  print(("RESULT bare=%.2f field=%.2f update=%.2f increment=%.2f"):format(bare, field, update, increment))
  assert(p.finished)
end }
