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
  /// What `p:observe(f, options)` made, by node (and every one by handle id); the nodes
  /// changed since the coalesced ones were last called, and whether that call is scheduled.
  var observers: [ObjectIdentifier: [ProgressObservation]] = [:]
  var observations: [ProgressObservation] = []
  /// Observations told every change (`every = true`) that are active: while there are any,
  /// no `completed` store is deferred (ProgressSync), so none of the changes is missed.
  var everyCount = 0
  var observedDirty: Set<ObjectIdentifier> = []
  var flushScheduled = false
  /// `become_current` calls not resigned yet, in every coroutine: while there are none, no
  /// operation declared can be adopted, and declaring one looks no further.
  var openBecomeCurrent = 0
  /// Implicit composition for Lua code that runs outside any coroutine (observers, handlers).
  let scriptless = ProgressContext()
  /// The string "completed" (a registry reference, so its address stays valid), compared by
  /// address (short strings are unique).
  var completedKey: Int32 = LUA_NOREF
  var completedAddress: UnsafePointer<CChar>?
  /// Handles whose `completed` was stored raw since the last sync (see ProgressSync).
  var armed: [Int] = []
}

/// One `p:observe(f, { initial =, keys =, every = })`: the function, what it watches and
/// what it saw last.
final class ProgressObservation {
  let id: Int
  let node: ProgressNode
  let function: Int32
  /// The fields whose change calls it (nil: any change of the node or below it).
  let keys: [String]?
  /// Called at each change, not at most 15 times a second.
  let every: Bool
  /// The watched fields' values when it was last called.
  var seen: [String]
  var active = true

  init(id: Int, node: ProgressNode, function: Int32, keys: [String]?, every: Bool) {
    (self.id, self.node, self.function, self.keys, self.every) = (id, node, function, keys, every)
    seen = keys.map { ProgressObservation.values(of: node, $0) } ?? []
  }

  /// The fields `keys` may name.
  static let observable = [
    "fraction", "completed", "total", "indeterminate", "finished", "cancelled", "paused",
    "description", "additional_description", "throughput", "eta", "kind", "file_operation",
    "file_url", "file_total_count", "file_completed_count", "cancellable", "pausable", "user_info"
  ]

  /// The values of `keys` on `node`, as text (compared, never shown).
  static func values(of node: ProgressNode, _ keys: [String]) -> [String] {
    keys.map { key in
      switch key {
      case "fraction": "\(node.fraction)"
      case "completed": "\(node.completed)"
      case "total": "\(node.total)"
      case "indeterminate": "\(node.isIndeterminate)"
      case "finished": "\(node.isFinished)"
      case "cancelled": "\(node.isCancelled)"
      case "paused": "\(node.isPaused)"
      case "description": node.localizedDescription
      case "additional_description": node.localizedAdditionalDescription
      case "throughput": "\(node.throughput ?? -1)"
      case "eta": "\(node.estimatedTimeRemaining ?? -1)"
      case "kind": node.kind?.rawValue ?? ""
      case "file_operation": node.fileOperation?.rawValue ?? ""
      case "file_url": node.fileURL ?? ""
      case "file_total_count": "\(node.fileTotalCount ?? -1)"
      case "file_completed_count": "\(node.fileCompletedCount ?? -1)"
      case "cancellable": "\(node.isCancellable)"
      case "pausable": "\(node.isPausable)"
      default: "\(node.userInfo.sorted { $0.key < $1.key })"
      }
    }
  }

  /// Whether a watched field changed since it was last called (any change without keys);
  /// records what it sees now.
  func changed() -> Bool {
    guard let keys else { return true }
    let now = Self.values(of: node, keys)
    if now == seen { return false }
    seen = now
    return true
  }
}
