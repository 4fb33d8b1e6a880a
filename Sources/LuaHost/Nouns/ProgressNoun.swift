// The progress noun: a progress handle's fields and setters, methods, and description.
import CLua
import CLuaShim
import TaskEngine

extension ScriptHost {
  /// Progress handles: "<progress 3 of 10: 30% completed, paused>". `completed` is read and
  /// set through `rawIndex` and `rawNewIndex` first, the cheap path of ProgressSync.
  static var progressNoun: LuaNoun<ProgressNode> {
    LuaNoun(
      kind: .progress, name: "progress", variable: "p",
      object: { host, id in host.progressHandles.nodes[id] },
      title: { _ in "progress" },
      fields: progressNounFields, methods: progressNounMethods, luaMethods: [],
      describe: { node in
        var state = node.isCancelled ? ", cancelled" : node.isPaused ? ", paused" : ""
        if node.isFinished { state += ", finished" }
        return "<progress \(node.completed) of \(node.total): \(node.localizedDescription)\(state)>"
      },
      refuse: { _, key in
        if readOnlyProgressFields.contains(key) { return ScriptError("progress: '\(key)' is read-only") }
        let hint = suggestion(for: key, among: progressNounFields.filter { $0.set != nil }.map(\.name))
        return ScriptError("progress has no field '\(key)'" + (hint.isEmpty ? "" : "; \(hint)"))
      },
      rawIndex: { host, s in
        guard let key = lua_tolstring(s.L, 2, nil), key == host.progressHandles.completedAddress else { return false }
        // Reached only while the handle is not armed (see ProgressSync).
        guard let node = host.progress(at: 1, on: s) else { throw ScriptError("progress expected") }
        s.push(Int(node.completed))
        return true
      },
      rawNewIndex: { host, s in
        // While an observer is told every change, every store is applied at once.
        guard host.progressHandles.everyCount == 0 else { return false }
        guard let key = lua_tolstring(s.L, 2, nil), key == host.progressHandles.completedAddress,
          let value = s.integer(3), value.magnitude <= 1 << 53
        else { return false }  // else LuaNumber.whole refuses it
        guard let id = host.handleID(.progress, at: 1, on: s) else { throw ScriptError("progress expected") }
        host.armProgress(id: id, value: value, on: s)
        return true
      })
  }

  /// The fields Lua reads but cannot set.
  private static let readOnlyProgressFields: Set = [
    "fraction", "indeterminate", "finished", "cancelled", "paused", "parent"
  ]

  /// The settable fields first (in the order progress{} lists them in its messages), then the
  /// read-only ones.
  private static var progressNounFields: [LuaField<ProgressNode>] {
    func integer(_ s: LuaStack, _ i: Int32, _ key: String) throws -> Int64 {
      guard let n = s.number(i) else {
        throw ScriptError("progress: '\(key)' must be a whole number \(LuaNumber.wholeRange) (got \(s.typeName(i)))")
      }
      return try LuaNumber.whole(n, "progress: '\(key)'")
    }
    func optionalText(_ host: ScriptHost, _ s: LuaStack, _ i: Int32, _ key: String) throws -> String? {
      if s.isNil(i) { return nil }
      guard let text = s.string(i) else {
        throw ScriptError("progress: '\(key)' must be a string (got \(s.typeName(i)))")
      }
      return try host.displayText(text, "progress: '\(key)'")
    }
    func optionalNumber(_ s: LuaStack, _ i: Int32, _ key: String) throws -> Double? {
      if s.isNil(i) { return nil }
      guard let n = s.number(i) else { throw ScriptError("progress: '\(key)' must be a number (got \(s.typeName(i)))") }
      return try LuaNumber.nonNegative(n, "progress: '\(key)'")
    }
    func flag(_ s: LuaStack, _ i: Int32, _ key: String) throws -> Bool {
      guard s.type(i) == LUA_TBOOLEAN else {
        throw ScriptError("progress: '\(key)' must be a boolean (got \(s.typeName(i)))")
      }
      return s.boolean(i)
    }
    func handler(_ key: String) -> LuaField<ProgressNode> {
      LuaField(
        key,
        get: { host, node, s in
          if let ref = host.progressHandles.handlers[ObjectIdentifier(node)]?[key] {
            host.pushRef(ref, on: s)
          } else {
            s.pushNil()
          }
        }, set: { host, node, s, i in try host.setProgressHandler(node, key, value: i, s) })
    }
    return [
      LuaField(
        "total", get: { _, node, s in s.push(Int(node.total)) },
        set: { _, node, s, i in node.total = try integer(s, i, "total") }),
      LuaField(
        "completed", get: { _, node, s in s.push(Int(node.completed)) },
        set: { _, node, s, i in node.completed = try integer(s, i, "completed") }),
      LuaField(
        "kind", get: { _, node, s in node.kind.map { s.push($0.rawValue) } ?? s.pushNil() },
        set: { host, node, s, i in
          let text = try optionalText(host, s, i, "kind")
          guard text == nil || text == "file" else { throw ScriptError("progress: 'kind' must be \"file\" or nil") }
          node.kind = text.map { _ in .file }
        }),
      LuaField(
        "description", get: { _, node, s in s.push(node.localizedDescription) },
        set: { host, node, s, i in node.description = try optionalText(host, s, i, "description") }),
      LuaField(
        "additional_description", get: { _, node, s in s.push(node.localizedAdditionalDescription) },
        set: { host, node, s, i in node.additionalDescription = try optionalText(host, s, i, "additional_description") }
      ),
      LuaField(
        "cancellable", get: { _, node, s in s.push(node.isCancellable) },
        set: { _, node, s, i in node.isCancellable = try flag(s, i, "cancellable") }),
      LuaField(
        "pausable", get: { _, node, s in s.push(node.isPausable) },
        set: { _, node, s, i in node.isPausable = try flag(s, i, "pausable") }),
      LuaField(
        "throughput", get: { _, node, s in node.throughput.map { s.push($0) } ?? s.pushNil() },
        set: { _, node, s, i in node.throughput = try optionalNumber(s, i, "throughput") }),
      LuaField(
        "eta", get: { _, node, s in node.estimatedTimeRemaining.map { s.push($0) } ?? s.pushNil() },
        set: { _, node, s, i in node.estimatedTimeRemaining = try optionalNumber(s, i, "eta") }),
      LuaField(
        "file_operation", get: { _, node, s in node.fileOperation.map { s.push($0.rawValue) } ?? s.pushNil() },
        set: { host, node, s, i in
          guard let text = try optionalText(host, s, i, "file_operation") else { node.fileOperation = nil; return }
          guard let operation = ProgressNode.FileOperation(rawValue: text) else {
            throw ScriptError(
              "progress: 'file_operation' must be downloading, decompressing, receiving or copying (got '\(text)')")
          }
          node.fileOperation = operation
        }),
      LuaField(
        "file_url", get: { _, node, s in node.fileURL.map { s.push($0) } ?? s.pushNil() },
        set: { host, node, s, i in node.fileURL = try optionalText(host, s, i, "file_url") }),
      LuaField(
        "file_total_count", get: { _, node, s in node.fileTotalCount.map { s.push($0) } ?? s.pushNil() },
        set: { _, node, s, i in node.fileTotalCount = s.isNil(i) ? nil : Int(try integer(s, i, "file_total_count")) }),
      LuaField(
        "file_completed_count", get: { _, node, s in node.fileCompletedCount.map { s.push($0) } ?? s.pushNil() },
        set: { _, node, s, i in
          node.fileCompletedCount = s.isNil(i) ? nil : Int(try integer(s, i, "file_completed_count"))
        }),
      LuaField(
        "user_info", get: { host, node, s in host.pushUserInfo(node, on: s) },
        set: { host, node, s, i in try host.replaceUserInfo(node, value: i, s) }),
      handler("on_cancel"),
      handler("on_pause"),
      handler("on_resume"),
      LuaField("fraction") { _, node, s in s.push(node.fraction) },
      LuaField("indeterminate") { _, node, s in s.push(node.isIndeterminate) },
      LuaField("finished") { _, node, s in s.push(node.isFinished) },
      LuaField("cancelled") { _, node, s in s.push(node.isCancelled) },
      LuaField("paused") { _, node, s in s.push(node.isPaused) },
      LuaField("parent") { host, node, s in
        if let parent = node.parent {
          host.pushHandle(.progress, id: host.progressID(parent), on: s)
        } else {
          s.pushNil()
        }
      }
    ]
  }

  private static var progressNounMethods: [LuaMethod<ProgressNode>] {
    [
      LuaMethod("add_child") { host, node, s in
        guard let child = host.progress(at: 2, on: s) else { throw s.badArgument(2, "add_child", "progress") }
        guard let pending = s.integer(3), pending >= 0 else {
          throw host.badNumberArgument(s, 3, "add_child", "non-negative integer")
        }
        guard child.parent == nil else { throw ScriptError("add_child: that progress already has a parent") }
        guard child !== node else { throw ScriptError("add_child: a progress cannot be its own child") }
        node.addChild(child, pending: Int64(pending))
        return 0
      },
      LuaMethod("become_current") { host, node, s in
        guard let pending = s.integer(2), pending >= 0 else {
          throw host.badNumberArgument(s, 2, "become_current", "non-negative integer")
        }
        guard host.progressContext().becomeCurrent(node, pending: Int64(pending)) else {
          throw ScriptError("become_current: this progress is already current")
        }
        host.progressHandles.openBecomeCurrent += 1
        return 0
      },
      LuaMethod("resign_current") { host, node, _ in
        guard host.progressContext().current === node else {
          throw ScriptError("resign_current: this progress is not the current one")
        }
        host.progressContext().resignCurrent()
        host.progressHandles.openBecomeCurrent -= 1
        return 0
      },
      LuaMethod("cancel") { _, node, _ in
        node.cancel(); return 0
      },
      LuaMethod("pause") { _, node, _ in
        node.pause(); return 0
      },
      LuaMethod("resume") { _, node, _ in
        node.resume(); return 0
      },
      LuaMethod("observe") { host, node, s in try host.observe(node, s) },
      LuaMethod("unobserve") { host, _, s in
        guard let id = host.handleID(.observation, at: 2, on: s) else {
          throw s.badArgument(2, "unobserve", "observation (what observe returned)")
        }
        host.unobserve(host.progressHandles.observations[id])
        return 0
      },
      LuaMethod("set_user_info") { host, node, s in
        guard let key = s.string(2) else { throw s.badArgument(2, "set_user_info", "string") }
        try host.setUserInfo(node, key: key, value: 3, s)
        return 0
      }
    ]
  }
}
