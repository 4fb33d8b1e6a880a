-- benchmarks/store.lua: the run store's workflows, copied into a scratch folder per scenario
-- (the store is .taskrun/ beside the script).   taskrun -C DIR store.lua -- CASE ...
-- CASE: cp N (N operations `cp src/fI.txt out/fI.txt`, I from 0, with their inputs and
-- outputs) | true N (N operations `true`) | sleeps SCALE (20 operations sleeping 0.2 to 1.5 s,
-- 15 s in all, times SCALE) | critical WIDTH SHORT LENGTH LONG (WIDTH operations sleeping
-- SHORT s, then a chain of LENGTH operations sleeping LONG s, declared last).
local case = arg[1]
if case == "cp" then
  for i = 0, tonumber(arg[2]) - 1 do
    operation { name = "c" .. i, sh = "cp src/f" .. i .. ".txt out/f" .. i .. ".txt",
                inputs = "src/f" .. i .. ".txt", outputs = "out/f" .. i .. ".txt" }
  end
elseif case == "true" then
  for i = 1, tonumber(arg[2]) do operation { name = "t" .. i, sh = "true" } end
elseif case == "sleeps" then
  local scale = tonumber(arg[2])
  local seconds = { 0.2, 1.5, 0.4, 1.1, 0.7, 1.3, 0.3, 0.9, 0.6, 1.2,
                    0.5, 1.0, 0.8, 1.4, 0.2, 0.6, 0.9, 0.3, 0.7, 0.4 }
  for i, s in ipairs(seconds) do operation { name = "s" .. i, sh = ("sleep %.3f"):format(s * scale) } end
elseif case == "critical" then
  local width, short, length, long = tonumber(arg[2]), arg[3], tonumber(arg[4]), arg[5]
  for i = 1, width do operation { name = "w" .. i, sh = "sleep " .. short } end
  local p
  for i = 1, length do p = operation { name = "c" .. i, sh = "sleep " .. long, after = { p } } end
else
  error("unknown case '" .. tostring(case) .. "'")
end
