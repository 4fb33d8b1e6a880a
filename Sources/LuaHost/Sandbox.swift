// Sandbox: what `--sandbox` takes away from an untrusted script; `sh` stays the way to run commands.
import CLua
import CLuaShim

/// Run once on the globals table: files, modules, the debug library and loading from files
/// go; `os` keeps reading time and the environment; `load` takes text only (a binary chunk
/// can break the VM's invariants).
let sandboxChunk = #"""
local G = ...
local os, load, select = G.os, G.load, select
for _, name in ipairs { "io", "package", "debug", "dofile", "loadfile", "require" } do G[name] = nil end
G.os = { clock = os.clock, time = os.time, date = os.date, difftime = os.difftime, getenv = os.getenv }
function G.load(chunk, name, mode, ...)
  if select("#", ...) > 0 then return load(chunk, name, "t", ...) end
  return load(chunk, name, "t")
end
"""#

extension ScriptHost {
  /// Applies `--sandbox` (DESIGN §5). Call after the API is installed: the prelude keeps
  /// what it captured (coroutine plumbing, debug.getinfo for error positions).
  public func applySandbox() {
    let s = stack
    guard tl_load(L, sandboxChunk, sandboxChunk.utf8.count, "=[sandbox]", "t") == LUA_OK else {
      fatalError("taskrun sandbox: \(s.describe(-1))")
    }
    lua_rawgeti(L, tl_registryindex(), lua_Integer(LUA_RIDX_GLOBALS))
    if tl_pcall(L, 1, 0, 0) != LUA_OK { fatalError("taskrun sandbox: \(s.describe(-1))") }
  }
}
