// ProgressHandles: the progress nodes Lua holds handles to, and what Lua attached to them.
import CLua
import CLuaShim
import TaskEngine

/// Progress nodes by handle id (and each node's id), the handlers and observers Lua gave
/// them, and the state of ProgressSync: the interned "completed" and the handles whose
/// `completed` Lua has stored raw since the last sync.
struct ProgressHandles {
  var nodes: [ProgressNode] = []
  var ids: [ObjectIdentifier: Int] = [:]
  /// on_cancel, on_pause, on_resume (registry references), by node.
  var handlers: [ObjectIdentifier: [String: Int32]] = [:]
  /// The functions `p:observe(f)` gave, by node; the nodes changed since they were last
  /// called, and whether that call is scheduled.
  var observers: [ObjectIdentifier: [Int32]] = [:]
  var observedDirty: Set<ObjectIdentifier> = []
  var flushScheduled = false
  /// Implicit composition for Lua code that runs outside any coroutine (observers, handlers).
  let scriptless = ProgressContext()
  /// The string "completed" (a registry reference, so its address stays valid), compared by
  /// address (short strings are unique).
  var completedKey: Int32 = LUA_NOREF
  var completedAddress: UnsafePointer<CChar>?
  /// Handles whose `completed` was stored raw since the last sync (see ProgressSync).
  var armed: [Int] = []
}
