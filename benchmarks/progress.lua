-- benchmarks/progress.lua: the cost of progress updates from Lua.
--   taskrun -q benchmarks/progress.lua -- [N]
-- Times N iterations of a bare loop, of a loop that stores a table field, and of a loop that
-- sets p.completed on a progress made in the body (an implicit child of the operation's
-- progress), all with locals as a body would have them; the best of 7 rounds of each (the
-- loops take milliseconds, which a busy machine's noise moves by a tenth).
local n = tonumber(arg[1] or 1000000)
operation { name = "updates", run = function()
  local best = { bare = math.huge, field = math.huge, update = math.huge, increment = math.huge }
  local function keep(label, start) best[label] = math.min(best[label], (os.clock() - start) / n * 1e9) end
  local p = progress { total = n }
  local t = { completed = 0 }
  for _ = 1, 7 do
    local start = os.clock()
    local x = 0
    for i = 1, n do x = i end
    keep("bare", start)
    start = os.clock()
    for i = 1, n do t.completed = i end
    keep("field", start)
    start = os.clock()
    for i = 1, n do p.completed = i end
    keep("update", start)
    p.completed = 0
    start = os.clock()
    for _ = 1, n do p.completed = p.completed + 1 end
    keep("increment", start)
  end
  assert(p.finished and p.fraction == 1, "the updates did not reach the progress")
  for _, label in ipairs { "bare", "field", "update", "increment" } do
    print(("%-10s %7.2f ns/iteration"):format(label, best[label]))
  end
  print(("p.completed = i vs bare loop: %.2fx"):format(best.update / best.bare))
  print(("RESULT bare=%.2f field=%.2f update=%.2f increment=%.2f"):format(best.bare, best.field,
    best.update, best.increment))
end }
