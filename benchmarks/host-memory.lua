-- benchmarks/host-memory.lua: bytes taskrun keeps outside the Lua heap per object a script makes.
--   taskrun benchmarks/host-memory.lua -- KIND [N]   (KIND: operation group queue resource progress observer)
-- Prints the peak resident size (VmHWM) and the data size grown per object, less the Lua
-- heap's growth: what HostCharge (Sources/LuaHost/Host/HostMemory.swift) charges is based on it.
local kind, n = arg[1], tonumber(arg[2] or 100000)
local function vm()
  local f = io.open("/proc/self/status") local t = f:read("a") f:close()
  return tonumber(t:match("VmData:%s*(%d+)")) * 1024, tonumber(t:match("VmHWM:%s*(%d+)")) * 1024
end
local keep = {}
collectgarbage() collectgarbage()
local d0, r0 = vm(); local l0 = collectgarbage("count") * 1024
local make = {
  operation = function(i) return operation{name='p'..i, run=function() end} end,
  group = function(i) return group{name='g'..i} end,
  queue = function(i) return queue{name='q'..i} end,
  resource = function(i) return resource('r'..i, 2) end,
  progress = function(i) return progress{total=1} end,
  observer = function(i) return observer{on_start=function() end} end,
}
for i = 1, n do keep[i] = make[kind](i) end
collectgarbage() collectgarbage()
local d1, r1 = vm(); local l1 = collectgarbage("count") * 1024
print(("%s: host data %.0f B, rss %.0f B, lua %.0f B per object"):format(kind, (d1-d0-(l1-l0))/n, (r1-r0-(l1-l0))/n, (l1-l0)/n))
os.exit(0)
