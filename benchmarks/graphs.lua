-- benchmarks/graphs.lua: synthetic graphs for timing the scheduler.
--   taskrun -q benchmarks/graphs.lua -- SHAPE N KIND
-- SHAPE: wide (N independent operations and one join) | layered (100 layers, each
-- operation after two of the previous layer). KIND: noop (no body) | lua (an empty Lua
-- body) | sh (the command `true`, executed directly).
local shape, n, kind = arg[1] or "wide", tonumber(arg[2] or 1000), arg[3] or "lua"
local function body(spec)
  if kind == "lua" then spec.run = function() end
  elseif kind == "sh" then spec.sh = "true" end
  return spec
end
if shape == "wide" then
  local all = {}
  for i = 1, n do all[i] = operation(body { name = "t" .. i }) end
  operation(body { name = "join", after = all })
else
  local width = math.max(1, n // 100)
  local previous
  for layer = 0, 99 do
    local current = {}
    for i = 1, width do
      local spec = body { name = ("t%d_%d"):format(layer, i) }
      if previous then spec.after = { previous[i], previous[i % width + 1] } end
      current[i] = operation(spec)
    end
    previous = current
  end
end
