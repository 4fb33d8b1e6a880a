-- sandbox.lua: what --sandbox takes away from an untrusted script; `sh` stays the way to run
-- commands. Run once on the globals table: files, modules, the debug library and loading from
-- files go; `os` keeps reading time and the environment; `load` takes text only (a binary
-- chunk can break the VM's invariants). `env`: when commands are confined too, the only
-- variables os.getenv sees (those commands see), so a secret cannot reach a command's words.
local G, env = ...
local os, load, select, type, error, pcall, tostring, tonumber = G.os, G.load, select, type, error, pcall, tostring, tonumber
local find, format, match, pack, unpack = string.find, string.format, string.match, table.pack, table.unpack
local getinfo = G.debug.getinfo
for _, name in ipairs { "io", "package", "debug", "dofile", "loadfile", "require" } do G[name] = nil end
G.os = { clock = os.clock, time = os.time, date = os.date, difftime = os.difftime, getenv = os.getenv }
-- load's argument errors read as load's own: the name the caller used, the caller's line.
-- `global`: the name Lua gives when the call site names none (a call through pcall).
local function argerror(n, why, global)
  local info = getinfo(2, "n")  -- 1: here, 2: the wrapper (named as its caller called it)
  error(format("bad argument #%d to '%s' (%s)", n, info and info.name or global or "load", why), 3)
end
function G.load(...)
  local n = select("#", ...)
  local chunk, name, mode, env = ...
  local t = type(mode)
  if mode ~= nil and t ~= "string" and t ~= "number" then argerror(3, "string expected, got " .. t) end
  -- A text string keeps its mode (it is text whatever the mode allows); anything else loads as text only.
  if type(chunk) ~= "string" or find(chunk, "^\27") then mode = "t" end
  local results = n == 0 and pack(pcall(load)) or n >= 4 and pack(pcall(load, chunk, name, mode, env))
    or pack(pcall(load, chunk, name, mode))
  if not results[1] then
    local k, why = match(tostring(results[2]), "^bad argument #(%d+) to '.-' %((.*)%)$")
    if k then argerror(tonumber(k), why) end
    error(results[2], 0)
  end
  return unpack(results, 2, results.n)
end
if env then
  function G.os.getenv(...)
    local name = ...
    local t = type(name)
    if t ~= "string" and t ~= "number" then
      argerror(1, "string expected, got " .. (select("#", ...) == 0 and "no value" or t), "os.getenv")
    end
    return env[tostring(name)]
  end
end
