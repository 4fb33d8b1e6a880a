-- benchmarks/floor.lua: the Lua floor under graphs.lua, what plain Lua spends on the same graph.
--   lua5.4 benchmarks/floor.lua benchmarks/graphs.lua SHAPE N lua
-- A stub `operation` returns a handle table that keeps the body (taskrun reads the spec, keeps
-- the body and returns a handle), then each body runs in a coroutine of its own, in
-- declaration order (every graph in graphs.lua is declared in an order its dependencies allow).
local script = arg[1]
local operations = {}

function operation(spec)
  local handle = { name = spec.name, run = spec.run, after = spec.after }
  operations[#operations + 1] = handle
  return handle
end

arg = { [0] = script, table.unpack(arg, 2) }
dofile(script)

for i = 1, #operations do
  local run = operations[i].run
  if run then assert(coroutine.resume(coroutine.create(run))) end
end
