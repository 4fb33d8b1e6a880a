// Chunks: the host's own Lua, from the .lua files the LuaSources target embeds.
import CLua
import CLuaShim
import LuaSources

extension ScriptHost {
  /// Pushes the embedded file `name` (e.g. "prelude.lua") as a function named `chunkName`.
  /// They are part of the binary, so one that does not compile is a build defect.
  func loadChunk(_ name: String, as chunkName: String) {
    var length = 0
    guard let text = tl_lua_source(name, &length) else { fatalError("taskrun: no embedded \(name)") }
    guard tl_load(L, text, length, chunkName, "t") == LUA_OK else {
      fatalError("taskrun: \(name): \(stack.describe(-1))")
    }
  }
}
