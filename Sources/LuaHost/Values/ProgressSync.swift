// Progress sync: `p.completed = n` in a loop is a raw table store; Swift catches up later.
//
// A progress handle is a table with no `completed` field, so the first write of a run of
// Lua code goes through __newindex: the host applies it, stores the value raw and notes the
// handle as armed. Later writes are plain table stores, as cheap as any Lua assignment. Before
// Swift next looks at progress (any host call, and whenever a coroutine, handler or observer
// hands control back) the armed handles are synced: the raw value is applied to the node and
// removed, which re-arms __newindex. So outside Lua code no handle is ever armed.
import CLua
import CLuaShim
import TaskEngine

extension ScriptHost {
  /// The first `p.completed = value` since the last sync (the value is at 3, the key at 2).
  func armProgress(id: Int, value: Int, on s: LuaStack) {
    progressHandles.nodes[id].completed = Int64(value)
    s.pushValue(2)
    s.pushValue(3)
    lua_rawset(s.L, 1)
    progressHandles.armed.append(id)
  }

  /// Applies the raw `completed` of every armed handle and disarms it; the message of the
  /// first value that is not a whole number, if any.
  func syncProgress() -> String? {
    guard !progressHandles.armed.isEmpty else { return nil }
    let armed = progressHandles.armed
    progressHandles.armed = []
    let s = stack
    var failure: String?
    for id in armed {
      pushHandle(.progress, id: id)
      s.pushRef(progressHandles.completedKey)
      lua_rawget(L, -2)
      do {
        try setProgressField(progressHandles.nodes[id], "completed", value: -1, s)
      } catch {
        failure = failure ?? "\(error)"
      }
      s.pop()
      s.pushRef(progressHandles.completedKey)
      s.pushNil()
      lua_rawset(L, -3)
      s.pop()
    }
    return failure
  }

  /// `protectedCall` bounded as the host's own calls are (`tl_bounded_call`: a billion
  /// instructions, or an interrupt), for handlers and observers, which may be called from
  /// inside a body's host call where the body's time slice cannot stop them.
  func boundedCall(_ s: LuaStack, arguments: Int32, results: Int32, what: String) -> Int32 {
    let status = what.withCString { tl_bounded_call(s.L, arguments, results, $0) }
    guard let message = syncProgress() else { return status }
    if status == LUA_OK { s.pop(results) } else { s.pop() }
    s.push(message)
    return LUA_ERRRUN
  }

  /// `lua_pcall` for user functions (handlers, observers): afterwards progress is synced, and
  /// a bad `completed` the function stored counts as its error (message on top, as pcall's).
  func protectedCall(_ s: LuaStack, arguments: Int32, results: Int32) -> Int32 {
    let status = tl_protected_call(s.L, Int32(arguments), Int32(results))
    guard let message = syncProgress() else { return status }
    if status == LUA_OK { s.pop(results) } else { s.pop() }
    s.push(message)
    return LUA_ERRRUN
  }
}
