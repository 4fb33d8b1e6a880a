// The queue noun: a queue handle's fields (max_concurrent and suspended settable), methods, description.
import CLua
import CLuaShim
import TaskEngine

extension ScriptHost {
  /// Queue handles: "<queue q: 3 operations, 1 running, max 2, suspended>".
  static var queueNoun: LuaNoun<WorkQueue> {
    LuaNoun(
      kind: .queue, name: "queue", variable: "q",
      object: { host, id in host.scheduler.queues[id] },
      title: { "queue '\($0.name)'" },
      fields: queueNounFields, methods: queueNounMethods, luaMethods: ["wait"],
      describe: { queue in
        let limit = queue.maxConcurrent < 0 ? "unlimited" : "max \(queue.maxConcurrent)"
        return "<queue \(queue.name): \(queue.count) operations, \(queue.running) running, \(limit)"
          + (queue.isSuspended ? ", suspended>" : ">")
      },
      refuse: { queue, key in
        ScriptError("queue '\(queue?.name ?? "?")': '\(key)' cannot be set (settable: max_concurrent, suspended)")
      })
  }

  private static var queueNounFields: [LuaField<WorkQueue>] {
    [
      LuaField("name") { _, queue, s in s.push(queue.name) },
      LuaField(
        "max_concurrent", get: { _, queue, s in s.push(queue.maxConcurrent) },
        set: { host, queue, s, i in
          let what = "queue '\(queue.name)'"
          guard let value = try host.numberField(s, at: i, "max_concurrent", in: what) else {
            throw ScriptError("\(what): max_concurrent must be a number (got nil)")
          }
          host.scheduler.setLimit(queue, try host.concurrency(value, what))
        }),
      LuaField(
        "suspended", get: { _, queue, s in s.push(queue.isSuspended) },
        set: { host, queue, s, i in
          guard s.type(i) == LUA_TBOOLEAN else {
            throw ScriptError("queue '\(queue.name)': suspended must be a boolean (got \(s.typeName(i)))")
          }
          if s.boolean(i) { host.scheduler.suspend(queue) } else { host.scheduler.resume(queue) }
        }),
      LuaField("count") { _, queue, s in s.push(queue.count) },
      LuaField("running") { _, queue, s in s.push(queue.running) },
      // As Foundation's `operations`: what has not finished; every one ever put on it, too.
      LuaField("operations") { host, queue, s in host.pushOperations(queue.operations.filter { !$0.isFinished }, on: s)
      },
      LuaField("all_operations") { host, queue, s in host.pushOperations(queue.operations, on: s) }
    ]
  }

  private static var queueNounMethods: [LuaMethod<WorkQueue>] {
    [
      LuaMethod("suspend") { host, queue, _ in
        host.scheduler.suspend(queue); return 0
      },
      LuaMethod("resume") { host, queue, _ in
        host.scheduler.resume(queue); return 0
      },
      LuaMethod("cancel_all") { host, queue, s in
        host.scheduler.cancelAll(queue, reason: s.string(2) ?? "cancelled")
        return 0
      }
    ]
  }
}
