// The progress API: progress{...}, progress.current(), handlers and observers (the handle's face: ProgressNoun).
import CLua
import CLuaShim
import FoundationEssentials
import TaskEngine

extension ScriptHost {
  /// The id of a node's handle, registering the node on first use.
  func progressID(_ node: ProgressNode) -> Int {
    if let id = progressHandles.ids[ObjectIdentifier(node)] { return id }
    progressHandles.nodes.append(node)
    progressHandles.ids[ObjectIdentifier(node)] = progressHandles.nodes.count - 1
    return progressHandles.nodes.count - 1
  }

  func progress(at i: Int32, on s: LuaStack) -> ProgressNode? {
    handleID(.progress, at: i, on: s).map { progressHandles.nodes[$0] }
  }

  /// Implicit composition happens per coroutine; a body's operation progress is current in it
  /// (made so lazily: most bodies never create a progress).
  func progressContext() -> ProgressContext {
    guard let co = current else { return progressHandles.scriptless }
    if !co.progressPrimed, let op = co.op {
      co.progressPrimed = true
      co.progress.becomeCurrent(op.progress, pending: max(1, op.progress.total), explicit: false)
    }
    return co.progress
  }

  /// Under a `become_current` whose units no progress took yet, a new operation's progress
  /// takes them (looked up without making a progress for every operation declared).
  func adoptProgress(of op: OperationNode) {
    let context = current.map { $0.progressPrimed || $0.op == nil ? $0.progress : nil } ?? progressHandles.scriptless
    guard let context, context.awaitsAdoption else { return }
    context.adopt(op.progress)
  }

  /// The `progress` global: a table that builds nodes when called, with `current`.
  func pushProgressGlobal() {
    let s = stack
    s.newTable()
    pushFunction { host, s in
      if let node = host.progressContext().current {
        host.pushHandle(.progress, id: host.progressID(node), on: s)
      } else {
        s.pushNil()
      }
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
      throw ScriptError.badArgument(1, to: "progress", expected: "table", got: s.typeName(spec))
    }
    try checkFields(s, spec, valid: noun(.progress).settable, in: "progress")
    let total = try optionalInteger(s, spec, "total", in: "progress") ?? -1
    let kind: ProgressNode.Kind?
    if let name = try optionalString(s, spec, "kind", in: "progress") {
      guard let value = ProgressNode.Kind(rawValue: name) else {
        throw ScriptError("progress: field 'kind' must be \"file\" (got '\(name)')")
      }
      kind = value
    } else {
      kind = nil
    }
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

  /// Sets field `key` of `node` from the value at `value`, as `p[key] = value` does (nil
  /// resets the optional ones; see `progressNoun`).
  func setProgressField(_ node: ProgressNode, _ key: String, value i: Int32, _ s: LuaStack) throws {
    try noun(.progress).set(self, s, progressID(node), key, i)
  }

  /// Stores a handler and wires it to the node; it is called with the node's handle.
  func setProgressHandler(_ node: ProgressNode, _ key: String, value i: Int32, _ s: LuaStack) throws {
    let id = ObjectIdentifier(node)
    if let old = progressHandles.handlers[id]?[key] { stack.unref(old) }
    progressHandles.handlers[id]?[key] = nil
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
      progressHandles.handlers[id, default: [:]][key] = ref
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

  /// Calls `ref` with the node after it changes, at most 15 times a second, from the loop.
  func observe(_ node: ProgressNode, ref: Int32) {
    let id = ObjectIdentifier(node)
    let first = progressHandles.observers[id] == nil
    progressHandles.observers[id, default: []].append(ref)
    guard first else { return }
    let previous = node.onChange
    node.onChange = { [unowned self] changed in
      previous?(changed)
      guard progressHandles.observedDirty.insert(id).inserted else { return }
      guard !progressHandles.flushScheduled else { return }
      progressHandles.flushScheduled = true
      scheduler.after(1.0 / 15) { [unowned self] in flushObservers() }
    }
  }

  func flushObservers() {
    progressHandles.flushScheduled = false
    let dirty = progressHandles.observedDirty
    progressHandles.observedDirty = []
    for id in dirty {
      guard let index = progressHandles.ids[id] else { continue }
      let node = progressHandles.nodes[index]
      for ref in progressHandles.observers[id] ?? [] { callLua(ref, with: node, what: "progress observer") }
    }
  }

  func reportWarning(_ message: String) {
    TerminalText.writeMessage("taskrun: \(message)")
  }
}
