// The operation noun: what Lua reads from an operation (or group) handle, its methods, its description.
import CLua
import CLuaShim
import TaskEngine

extension ScriptHost {
  /// Operation handles, groups' too: fields Lua only reads (operation{} and group{} set them),
  /// the methods, and "<operation build: finished, succeeded, 0.25 s>".
  static var operationNoun: LuaNoun<OperationNode> {
    LuaNoun(
      kind: .operation, name: "operation", variable: "op",
      object: { host, id in host.scheduler.operation(id: id) },
      title: { "operation '\($0.name)'" },
      fields: operationNounFields, methods: operationNounMethods, luaMethods: ["wait"],
      describe: { op in
        var parts = [op.state.rawValue]
        if let outcome = op.outcome { parts.append(outcome.rawValue) }
        if let duration = op.duration { parts.append(formatFixed(duration, 2) + " s") }
        return "<operation \(op.name): \(parts.joined(separator: ", "))>"
      },
      refuse: { _, key in
        ScriptError(
          "cannot set '\(key)': the fields of an operation are read-only but 'priority' (set them in operation{})")
      })
  }

  private static var operationNounFields: [LuaField<OperationNode>] {
    [
      LuaField("group") { host, op, s in
        if let group = op.group { host.pushHandle(.operation, id: group.id, on: s) } else { s.pushNil() }
      },
      LuaField("children") { host, op, s in host.pushOperations(op.children, on: s) },
      LuaField("progress") { host, op, s in host.pushHandle(.progress, id: host.progressID(op.progress), on: s) },
      LuaField("name") { _, op, s in s.push(op.name) },
      LuaField("state") { _, op, s in s.push(op.state.rawValue) },
      LuaField("cancelled") { _, op, s in s.push(op.isCancelled || op.outcome == .cancelled) },
      LuaField("failed") { _, op, s in s.push(op.failed) },
      LuaField("skipped") { _, op, s in s.push(op.skipped) },
      LuaField("succeeded") { _, op, s in s.push(op.succeeded) },
      LuaField("outcome") { _, op, s in op.outcomeName.map { s.push($0) } ?? s.pushNil() },
      LuaField("error") { _, op, s in op.error.map { s.push($0) } ?? s.pushNil() },
      LuaField("error_kind") { _, op, s in op.errorKind.map { s.push($0.rawValue) } ?? s.pushNil() },
      LuaField("traceback") { _, op, s in op.traceback.map { s.push($0) } ?? s.pushNil() },
      LuaField("result") { host, op, s in host.pushResult(of: op, on: s) },
      LuaField("duration") { _, op, s in op.duration.map { s.push($0) } ?? s.pushNil() },
      LuaField("attempt") { _, op, s in s.push(op.attempt) },
      LuaField(
        "priority", get: { _, op, s in s.push(op.priority.name) },
        set: { host, op, s, i in
          do { try host.scheduler.setPriority(op, try host.priority(s, i, what: "operation '\(op.name)'")) } catch let
            error as EngineError
          { throw ScriptError(error.description) }
        }),
      LuaField("qos") { _, op, s in op.qos.map { s.push($0.rawValue) } ?? s.pushNil() },
      LuaField("interactive") { _, op, s in s.push(op.interactive) },
      LuaField("when") { _, op, s in s.push(op.policy.rawValue) },
      LuaField("weight") { _, op, s in s.push(op.weight) },
      LuaField("desc") { _, op, s in op.desc.map { s.push($0) } ?? s.pushNil() },
      LuaField("sandbox") { host, op, s in host.pushSandbox(of: op, on: s) },
      LuaField("timeout") { _, op, s in op.timeout.map { s.push($0) } ?? s.pushNil() },
      LuaField("activities") { _, op, s in
        s.newTable(array: Int32(op.activities.count))
        for (i, label) in op.activities.enumerated() {
          s.push(label)
          s.rawSet(-2, i + 1)
        }
      },
      LuaField("queue") { host, op, s in host.pushHandle(.queue, id: op.queue.id, on: s) },
      LuaField("dependencies") { host, op, s in host.pushOperations(op.dependencies, on: s) }
    ]
  }

  private static var operationNounMethods: [LuaMethod<OperationNode>] {
    [
      LuaMethod("after") { host, op, s in
        for i in stride(from: 2, through: max(2, s.top), by: 1) where i <= s.top {
          try host.addDependencies(op, s, i, what: "operation '\(op.name)'", field: "argument #\(i - 1) to 'after'")
        }
        s.setTop(1)
        return 1
      },
      LuaMethod("remove_dependency") { host, op, s in
        guard let dependency = host.operation(at: 2, on: s) else {
          throw s.badArgument(2, "remove_dependency", "operation")
        }
        do { try host.scheduler.removeDependency(op, dependency) } catch let error as EngineError {
          throw ScriptError(error.description)
        }
        return 0
      },
      LuaMethod("cancel") { host, op, s in
        let reason = s.isNil(2) ? "cancelled" : (s.string(2) ?? s.describe(2))
        try host.displayArgument(reason, 1, "cancel")
        host.scheduler.cancel(op, reason: reason)
        return 0
      },
      LuaMethod("add") { host, group, s in
        guard group.isGroup else { throw ScriptError("add: '\(group.name)' is not a group") }
        for i in stride(from: 2, through: s.top, by: 1) {
          try host.addToGroup(group, s, i, what: "group '\(group.name)'")
        }
        s.setTop(1)
        return 1
      },
      LuaMethod("add_condition") { host, op, s in
        try host.attachCondition(op, s, 2, what: "operation '\(op.name)'")
        return 0
      },
      LuaMethod("add_observer") { host, op, s in
        try host.attachObserver(op, s, 2, what: "operation '\(op.name)'")
        return 0
      },
      LuaMethod("why") { host, op, s in
        s.push(host.scheduler.explain(op))
        return 1
      }
    ]
  }
}
