-- fuzz.lua: calls taskrun's Lua API with hostile values.   taskrun --yes fuzz.lua -- SEED CALLS
-- Every call is protected except a few at the end; the host must never die by a signal,
-- hang or exit with anything but 0, 1 or 2 (StressTests' sibling FuzzTests runs it).
local seed, calls = tonumber(arg[1]) or 1, tonumber(arg[2]) or 200
math.randomseed(seed)
local function pick(list) return list[math.random(#list)] end

local cyclic = {} cyclic.self = cyclic
local forged = setmetatable({}, { __index = function() error("forged") end })
local values = {
  false, true, 0, -1, 1, 0.5, 0 / 0, 1 / 0, -1 / 0, 2 ^ 63, -2 ^ 63, 1e300, -1e300,
  math.maxinteger, math.mininteger, 3e6, "", "\0\255", ("x"):rep(1000), "main", "op1", "m",
  "%d+", "(%d+)/(%d+)", {}, { 1, 2, 3 }, { name = "x" }, { after = "nope" }, cyclic, forged,
  print, function() end, function() error({}) end, coroutine.create(function() end),
  main_queue, progress {}, mutex "m", resource("r", 2), activity "a", timeout(0.01),
  observer {}, condition { evaluate = function() return true end },
}
local function value(safe)
  if math.random() < 0.15 then return nil end
  local v = pick(values)
  -- Blocking primitives keep to values that cannot block for long (a sleep of 1e300 is
  -- documented as "until cancelled").
  if safe and type(v) == "number" and v > 0.05 and v == v and v ~= 1 / 0 then return 0.01 end
  return v
end

local counter = 0
local function freshName() counter = counter + 1 return "f" .. counter end
local function spec()
  local t = { name = math.random() < 0.7 and freshName() or value() }
  for _, field in ipairs { "run", "sh", "after", "queue", "priority", "when", "conditions",
                           "timeout", "observers", "retries", "retry", "weight", "env", "cwd", "progress" } do
    if math.random() < 0.2 then t[field] = value() end
  end
  if t.sh == nil and t.run == nil and math.random() < 0.5 then t.sh = pick { "true", "false", "echo 123456789012345678901/7" } end
  if math.random() < 0.5 then t.timeout = 2 end
  return t
end

local made = {}
local targets = {
  function() made[#made + 1] = operation(math.random() < 0.6 and spec() or value()) end,
  function() made[#made + 1] = group { name = freshName(), weight = value(), value(), value() } end,
  function() queue { name = math.random() < 0.8 and freshName() or value(), max_concurrent = value() } end,
  function() print(value(), value()) end,
  function() return cancelled() end,
  function() return condition { name = value(), evaluate = value(), dependency = value() } end,
  function() return mutex(value()) end,
  function() return resource(value(), value()) end,
  function() return exists(value()) end,
  function() return reachable("127.0.0.1", value(), value()) end,
  function() return negate(value()), silent(value()), all(value(), value()), any(value()) end,
  function() return confirm(value()) end,
  function() return observer { on_start = value(), on_finish = value(), on_produce = value() } end,
  function() return activity(value()), timeout(value()), background(value()) end,
  function() return progress { total = value(), completed = value(), kind = value(), description = value() } end,
  function() local p = progress {} p[value() or "total"] = value() return p.fraction, p.description end,
  function() local p = pick(values) if type(p) == "table" then return p.completed, p.total end end,
  function() local q = main_queue q[value() or "max_concurrent"] = value() end,
  function() local op = pick(made) if op then op[pick { "after", "remove_dependency", "cancel", "add" }](op, value(), value()) end end,
  function() local op = pick(made) if op then return op[value() or "name"] end end,
  function() local op = pick(made) if op then op[value() or "name"] = value() end end,
  function() local p = progress {} p[pick { "add_child", "become_current", "resign_current", "cancel", "pause", "resume", "observe" }](p, value(), value()) end,
  function() sleep(value(true)) end,
  function() return sh(value(), value()) end,
  function() local op = pick(made) if op and op.state == "pending" then return wait(op) end end,
}

local function fuzz(n)
  for _ = 1, n do
    local f = pick(targets)
    pcall(f)
    if math.random() < 0.05 then pcall(setmetatable, pick(values), pick(values)) end
  end
end

fuzz(calls)
for i = 1, 3 do
  operation { name = "body" .. i, timeout = 5, run = function() fuzz(calls // 2) end }
end
if math.random() < 0.3 then pick(targets)() end  -- unprotected: an error here is exit 2
