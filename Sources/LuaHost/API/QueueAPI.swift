// The queue API: queue{...} (the handle's face: QueueNoun).
import CLua
import CLuaShim
import TaskEngine

extension ScriptHost {
  /// The fields queue{} takes.
  static let queueFields = ["name", "max_concurrent", "suspended", "executor", "slurm"]

  /// `queue { name =, max_concurrent =, suspended = }`
  func createQueue(_ s: LuaStack) throws -> Int32 {
    guard s.type(1) == LUA_TTABLE else { throw s.badArgument(1, "queue", "table") }
    let name = try displayText(
      try optionalString(s, 1, "name", in: "queue") ?? "queue\(scheduler.queues.count)",
      "queue: field 'name'")
    let what = "queue '\(name)'"
    try checkFields(s, 1, valid: Self.queueFields, in: what)
    let given = try optionalNumber(s, 1, "max_concurrent", in: what).map { try concurrency($0, what) }
    let suspended = try optionalBoolean(s, 1, "suspended", in: what) ?? false
    let executor = try queueExecutor(s, 1, in: what)
    // A cluster takes many jobs at once, but not without end: 100 unless the queue says.
    let limit = given ?? (executor == nil ? -1 : 100)
    let queue: WorkQueue
    do {
      queue = try scheduler.makeQueue(name: name, maxConcurrent: limit, suspended: suspended)
      queue.executor = executor
    } catch let error as EngineError {
      throw ScriptError(error.description)
    }
    pushHandle(.queue, id: queue.id, on: s)
    return 1
  }

}
