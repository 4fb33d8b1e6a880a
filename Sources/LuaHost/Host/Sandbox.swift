// Sandbox: what `--sandbox` takes away from an untrusted script; `sh` stays the way to run commands.
import CLua
import CLuaShim

extension ScriptHost {
  /// Applies `--sandbox` (DESIGN §5). Call after the API is installed: the prelude keeps
  /// what it captured (coroutine plumbing, debug.getinfo for error positions).
  public func applySandbox() {
    let s = stack
    loadChunk("sandbox.lua", as: "=[sandbox]")
    lua_rawgeti(L, tl_registryindex(), lua_Integer(LUA_RIDX_GLOBALS))
    if tl_pcall(L, 1, 0, 0) != LUA_OK { fatalError("taskrun sandbox: \(s.describe(-1))") }
  }
}
