-- sandbox.lua: what --sandbox takes away from an untrusted script; `sh` stays the way to run
-- commands. Run once on the globals table: files, modules, the debug library and loading from
-- files go; `os` keeps reading time and the environment; `load` takes text only (a binary
-- chunk can break the VM's invariants).
local G = ...
local os, load, select = G.os, G.load, select
for _, name in ipairs { "io", "package", "debug", "dofile", "loadfile", "require" } do G[name] = nil end
G.os = { clock = os.clock, time = os.time, date = os.date, difftime = os.difftime, getenv = os.getenv }
function G.load(chunk, name, mode, ...)
  if select("#", ...) > 0 then return load(chunk, name, "t", ...) end
  return load(chunk, name, "t")
end
