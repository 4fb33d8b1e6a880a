-- benchmarks/sleepy.lua: a graph of sleeping operations whose critical path is known.
--   taskrun -q -j W benchmarks/sleepy.lua -- LAYERS WIDTH SECONDS
-- LAYERS layers of WIDTH operations that each sleep SECONDS, every operation after the whole
-- previous layer: with -j ≥ WIDTH the ideal makespan is LAYERS × SECONDS.
local layers, width, seconds = tonumber(arg[1] or 4), tonumber(arg[2] or 4), tonumber(arg[3] or 0.25)
local previous = {}
for layer = 1, layers do
  local current = {}
  for i = 1, width do
    current[i] = operation { name = ("s%d_%d"):format(layer, i), after = previous,
                             run = function() sleep(seconds) end }
  end
  previous = current
end
