// Sandbox: what `--sandbox` takes away from an untrusted script; `sh` stays the way to run commands.
import CLua
import CLuaShim

extension ScriptHost {
  /// Applies `--sandbox` (DESIGN §5). Call after the API is installed: the prelude keeps
  /// what it captured (coroutine plumbing, debug.getinfo for error positions).
  /// `environment`: what `os.getenv` may see (nil: taskrun's whole environment, as
  /// `--sandbox=lua` keeps it).
  public func applySandbox(environment: [String: String]?) {
    let s = stack
    loadChunk("sandbox.lua", as: "=[sandbox]")
    lua_rawgeti(L, tl_registryindex(), lua_Integer(LUA_RIDX_GLOBALS))
    if let environment {
      s.newTable(hash: Int32(environment.count))
      for (name, value) in environment {
        s.push(value)
        s.rawSet(-2, name)
      }
    } else {
      s.pushNil()
    }
    if tl_pcall(L, 2, 0, 0) != LUA_OK { fatalError("taskrun sandbox: \(s.describe(-1))") }
  }
}
