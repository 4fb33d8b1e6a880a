-- benchmarks/graphs.lua: synthetic graphs for timing the scheduler.
--   taskrun -q benchmarks/graphs.lua -- SHAPE N KIND
-- SHAPE: independent (N operations, no dependencies) | chain (each after the one before) |
-- layered (100 layers, each operation after two of the previous layer) | wide (N
-- independent operations and one join) | queues (N queues, an operation on each). KIND: noop (no body) | lua (an empty Lua body) |
-- sh (the command `true`, executed directly).
local shape, n, kind = arg[1] or "independent", tonumber(arg[2] or 1000), arg[3] or "lua"
local function body(spec)
  if kind == "lua" then spec.run = function() end
  elseif kind == "sh" then spec.sh = "true" end
  return spec
end
if shape == "independent" or shape == "wide" then
  local all = {}
  for i = 1, n do all[i] = operation(body { name = "t" .. i }) end
  if shape == "wide" then operation(body { name = "join", after = all }) end
elseif shape == "chain" then
  local previous
  for i = 1, n do previous = operation(body { name = "t" .. i, after = { previous } }) end
elseif shape == "layered" then
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
elseif shape == "queues" then
  for i = 1, n do operation(body { name = "t" .. i, queue = queue { name = "q" .. i } }) end
else
  error("unknown shape '" .. shape .. "' (independent, chain, layered, wide, queues)")
end
