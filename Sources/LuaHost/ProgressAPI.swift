// The progress API: progress{...}, progress.current(), node fields and methods, observers.
import CLua
import CLuaShim
import FoundationEssentials
import TaskEngine

extension ScriptHost {
  static let progressFields = ["total", "completed", "kind", "description", "additional_description",
    "cancellable", "pausable", "throughput", "eta", "file_operation", "file_url", "file_total_count",
    "file_completed_count", "on_cancel", "on_pause", "on_resume"]
  static let progressReadable = progressFields + ["fraction", "indeterminate", "finished", "cancelled",
    "paused", "parent"]

  /// The id of a node's handle, registering the node on first use.
  func progressID(_ node: ProgressNode) -> Int {
    if let id = progressIDs[ObjectIdentifier(node)] { return id }
    progressNodes.append(node)
    progressIDs[ObjectIdentifier(node)] = progressNodes.count - 1
    return progressNodes.count - 1
  }

  func progress(at i: Int32, on s: LuaStack) -> ProgressNode? {
    handleID(.progress, at: i, on: s).map { progressNodes[$0] }
  }

  /// Implicit composition happens per coroutine; a body's operation progress is current in it
  /// (made so lazily: most bodies never create a progress).
  func progressContext() -> ProgressContext {
    guard let co = current else { return scriptlessContext }
    if !co.progressPrimed, let op = co.op {
      co.progressPrimed = true
      co.progress.becomeCurrent(op.progress, pending: max(1, op.progress.total))
    }
    return co.progress
  }

  /// The `progress` global: a table that builds nodes when called, with `current`.
  func pushProgressGlobal() {
    let s = stack
    s.newTable()
    pushFunction { host, s in
      if let node = host.progressContext().current {
        host.pushHandle(.progress, id: host.progressID(node), on: s)
      } else { s.pushNil() }
      return 1
    }
    s.rawSet(-2, "current")
    s.newTable()
    pushFunction { host, s in try host.createProgress(s) }
    s.rawSet(-2, "__call")
    lua_setmetatable(L, -2)
  }

  /// `progress { total =, completed =, kind = "file", description =, … }`
  func createProgress(_ s: LuaStack) throws -> Int32 {
    let spec: Int32 = 2  // 1 is the progress table itself (__call)
    if s.isNil(spec) {
      s.setTop(spec)
      s.newTable()
      lua_copy(s.L, -1, spec)
      s.pop()
    }
    guard s.type(spec) == LUA_TTABLE else {
      throw ScriptError("bad argument #1 to 'progress' (table expected, got \(s.typeName(spec)))")
    }
    try checkFields(s, spec, valid: Self.progressFields, in: "progress")
    let total = try optionalInteger(s, spec, "total", in: "progress") ?? -1
    let kind: ProgressNode.Kind?
    if let name = try optionalString(s, spec, "kind", in: "progress") {
      guard let value = ProgressNode.Kind(rawValue: name) else {
        throw ScriptError("progress: field 'kind' must be \"file\" (got '\(name)')")
      }
      kind = value
    } else { kind = nil }
    try charge(HostCharge.progress, on: s)  // the node stays, whatever its fields say
    let node = progressContext().makeNode(total: total, kind: kind)
    node.clock = { [unowned scheduler] in scheduler.clock.now }
    for key in s.keys(spec) {
      guard case .name(let name) = key, name != "total", name != "kind" else { continue }
      s.rawGet(spec, name)
      defer { s.pop() }
      try setProgressField(node, name, value: s.top, s)
    }
    pushHandle(.progress, id: progressID(node), on: s)
    return 1
  }

  func optionalInteger(_ s: LuaStack, _ table: Int32, _ field: String, in what: String) throws -> Int64? {
    guard let value = try optionalNumber(s, table, field, in: what) else { return nil }
    return try LuaNumber.whole(value, "\(what): field '\(field)'")
  }

  func progressField(_ node: ProgressNode, _ key: String, _ s: LuaStack) throws -> Int32 {
    switch key {
    case "total": s.push(Int(node.total))
    case "completed": s.push(Int(node.completed))
    case "fraction": s.push(node.fraction)
    case "indeterminate": s.push(node.isIndeterminate)
    case "finished": s.push(node.isFinished)
    case "cancelled": s.push(node.isCancelled)
    case "paused": s.push(node.isPaused)
    case "cancellable": s.push(node.isCancellable)
    case "pausable": s.push(node.isPausable)
    case "kind": node.kind.map { s.push($0.rawValue) } ?? s.pushNil()
    case "description": s.push(node.localizedDescription)
    case "additional_description": s.push(node.localizedAdditionalDescription)
    case "throughput": node.throughput.map { s.push($0) } ?? s.pushNil()
    case "eta": node.estimatedTimeRemaining.map { s.push($0) } ?? s.pushNil()
    case "file_operation": node.fileOperation.map { s.push($0.rawValue) } ?? s.pushNil()
    case "file_url": node.fileURL.map { s.push($0) } ?? s.pushNil()
    case "file_total_count": node.fileTotalCount.map { s.push($0) } ?? s.pushNil()
    case "file_completed_count": node.fileCompletedCount.map { s.push($0) } ?? s.pushNil()
    case "parent":
      if let parent = node.parent { pushHandle(.progress, id: progressID(parent), on: s) } else { s.pushNil() }
    case "on_cancel", "on_pause", "on_resume":
      if let ref = progressHandlers[ObjectIdentifier(node)]?[key] { pushRef(ref, on: s) } else { s.pushNil() }
    default:
      let hint = suggestion(for: key, among: Self.progressReadable + progressMethods().map(\.0))
      throw ScriptError("progress has no field '\(key)'" + (hint.isEmpty ? "" : "; \(hint)"))
    }
    return 1
  }

  /// Sets a field from the value at `value` (nil resets the optional ones).
  func setProgressField(_ node: ProgressNode, _ key: String, value i: Int32, _ s: LuaStack) throws {
    func integer() throws -> Int64 {
      guard let n = s.number(i) else {
        throw ScriptError("progress: '\(key)' must be a whole number \(LuaNumber.wholeRange) (got \(s.typeName(i)))")
      }
      return try LuaNumber.whole(n, "progress: '\(key)'")
    }
    func optionalText() throws -> String? {
      if s.isNil(i) { return nil }
      guard let text = s.string(i) else { throw ScriptError("progress: '\(key)' must be a string (got \(s.typeName(i)))") }
      return try displayText(text, "progress: '\(key)'")
    }
    func optionalNumber() throws -> Double? {
      if s.isNil(i) { return nil }
      guard let n = s.number(i) else { throw ScriptError("progress: '\(key)' must be a number (got \(s.typeName(i)))") }
      return try LuaNumber.nonNegative(n, "progress: '\(key)'")
    }
    func flag() throws -> Bool {
      guard s.type(i) == LUA_TBOOLEAN else { throw ScriptError("progress: '\(key)' must be a boolean (got \(s.typeName(i)))") }
      return s.boolean(i)
    }
    switch key {
    case "total": node.total = try integer()
    case "completed": node.completed = try integer()
    case "description": node.description = try optionalText()
    case "additional_description": node.additionalDescription = try optionalText()
    case "cancellable": node.isCancellable = try flag()
    case "pausable": node.isPausable = try flag()
    case "kind":
      let text = try optionalText()
      guard text == nil || text == "file" else { throw ScriptError("progress: 'kind' must be \"file\" or nil") }
      node.kind = text.map { _ in .file }
    case "throughput": node.throughput = try optionalNumber()
    case "eta": node.estimatedTimeRemaining = try optionalNumber()
    case "file_operation":
      let text = try optionalText()
      guard let text else { node.fileOperation = nil; return }
      guard let operation = ProgressNode.FileOperation(rawValue: text) else {
        throw ScriptError("progress: 'file_operation' must be downloading, decompressing, receiving or copying (got '\(text)')")
      }
      node.fileOperation = operation
    case "file_url": node.fileURL = try optionalText()
    case "file_total_count": node.fileTotalCount = s.isNil(i) ? nil : Int(try integer())
    case "file_completed_count": node.fileCompletedCount = s.isNil(i) ? nil : Int(try integer())
    case "on_cancel", "on_pause", "on_resume":
      try setProgressHandler(node, key, value: i, s)
    case "fraction", "indeterminate", "finished", "cancelled", "paused", "parent":
      throw ScriptError("progress: '\(key)' is read-only")
    default:
      let hint = suggestion(for: key, among: Self.progressFields)
      throw ScriptError("progress has no field '\(key)'" + (hint.isEmpty ? "" : "; \(hint)"))
    }
  }

  /// Stores a handler and wires it to the node; it is called with the node's handle.
  func setProgressHandler(_ node: ProgressNode, _ key: String, value i: Int32, _ s: LuaStack) throws {
    let id = ObjectIdentifier(node)
    if let old = progressHandlers[id]?[key] { stack.unref(old) }
    progressHandlers[id]?[key] = nil
    let call: (() -> Void)?
    if s.isNil(i) {
      call = nil
    } else {
      guard s.type(i) == LUA_TFUNCTION else {
        throw ScriptError("progress: '\(key)' must be a function (got \(s.typeName(i)))")
      }
      s.pushValue(i)
      if s.L != L { lua_xmove(s.L, L, 1) }
      let ref = stack.ref()
      progressHandlers[id, default: [:]][key] = ref
      call = { [unowned self, unowned node] in callLua(ref, with: node, what: "progress \(key) handler") }
    }
    switch key {
    case "on_cancel": node.onCancel = call
    case "on_pause": node.onPause = call
    default: node.onResume = call
    }
  }

  /// Calls a Lua function with a progress handle, on the stack of the code now calling into
  /// the host (or the main one); an error is reported on stderr, never raised through Swift.
  func callLua(_ ref: Int32, with node: ProgressNode, what: String) {
    let s = LuaStack(L: callState ?? L)
    _ = lua_checkstack(s.L, 3)
    pushRef(ref, on: s)
    pushHandle(.progress, id: progressID(node), on: s)
    if protectedCall(s, arguments: 1, results: 0) != LUA_OK {
      reportWarning("\(what) failed: \(s.errorMessage(-1))")
      s.pop()
    }
  }

  func pushRef(_ ref: Int32, on s: LuaStack) {
    stack.pushRef(ref)
    if s.L != L { lua_xmove(L, s.L, 1) }
  }

  func progressMethods() -> [(String, HostFunction)] {
    func target(_ host: ScriptHost, _ s: LuaStack, _ method: String) throws -> ProgressNode {
      host.progressNodes[try host.receiverID(.progress, s, method)]
    }
    return [
      ("add_child", { host, s in
        let node = try target(host, s, "add_child")
        guard let child = host.progress(at: 2, on: s) else { throw s.badArgument(2, "add_child", "progress") }
        guard let pending = s.integer(3), pending >= 0 else { throw s.badArgument(3, "add_child", "non-negative integer") }
        guard child.parent == nil else { throw ScriptError("add_child: that progress already has a parent") }
        guard child !== node else { throw ScriptError("add_child: a progress cannot be its own child") }
        node.addChild(child, pending: Int64(pending))
        return 0
      }),
      ("become_current", { host, s in
        let node = try target(host, s, "become_current")
        guard let pending = s.integer(2), pending >= 0 else { throw s.badArgument(2, "become_current", "non-negative integer") }
        guard host.progressContext().becomeCurrent(node, pending: Int64(pending)) else {
          throw ScriptError("become_current: this progress is already current")
        }
        return 0
      }),
      ("resign_current", { host, s in
        let node = try target(host, s, "resign_current")
        guard host.progressContext().current === node else {
          throw ScriptError("resign_current: this progress is not the current one")
        }
        host.progressContext().resignCurrent()
        return 0
      }),
      ("cancel", { host, s in try target(host, s, "cancel").cancel(); return 0 }),
      ("pause", { host, s in try target(host, s, "pause").pause(); return 0 }),
      ("resume", { host, s in try target(host, s, "resume").resume(); return 0 }),
      ("observe", { host, s in
        let node = try target(host, s, "observe")
        guard s.type(2) == LUA_TFUNCTION else { throw s.badArgument(2, "observe", "function") }
        s.pushValue(2)
        if s.L != host.L { lua_xmove(s.L, host.L, 1) }
        host.observe(node, ref: host.stack.ref())
        return 0
      }),
    ]
  }

  /// Calls `ref` with the node after it changes, at most 15 times a second, from the loop.
  func observe(_ node: ProgressNode, ref: Int32) {
    let id = ObjectIdentifier(node)
    let first = progressObservers[id] == nil
    progressObservers[id, default: []].append(ref)
    guard first else { return }
    let previous = node.onChange
    node.onChange = { [unowned self] changed in
      previous?(changed)
      guard observedDirty.insert(id).inserted else { return }
      guard !observerFlushScheduled else { return }
      observerFlushScheduled = true
      scheduler.after(1.0 / 15) { [unowned self] in flushObservers() }
    }
  }

  func flushObservers() {
    observerFlushScheduled = false
    let dirty = observedDirty
    observedDirty = []
    for id in dirty {
      guard let index = progressIDs[id] else { continue }
      let node = progressNodes[index]
      for ref in progressObservers[id] ?? [] { callLua(ref, with: node, what: "progress observer") }
    }
  }

  func reportWarning(_ message: String) {
    TerminalText.writeMessage("taskrun: \(message)")
  }
}
