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
    guard progressHandles.openBecomeCurrent > 0 else { return }
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
  /// the host (or the main one), bounded as every call of the host's own is (a handler that
  /// spins is stopped, not the run with it); an error is reported on stderr (`and then` is
  /// added to the message), never raised through Swift. Returns whether it returned.
  @discardableResult
  func callLua(_ ref: Int32, with node: ProgressNode, what: String, andThen: String = "") -> Bool {
    let s = LuaStack(L: callState ?? L)
    _ = lua_checkstack(s.L, 3)
    pushRef(ref, on: s)
    pushHandle(.progress, id: progressID(node), on: s)
    guard boundedCall(s, arguments: 1, results: 0, what: what) != LUA_OK else { return true }
    reportWarning("\(what) failed: \(s.errorMessage(-1))" + andThen)
    s.pop()
    return false
  }

  /// Calls an observation's function; one that raised is not called again.
  private func tell(_ observation: ProgressObservation) {
    if !callLua(
      observation.function, with: observation.node, what: "progress observer",
      andThen: "; it is not called again")
    {
      unobserve(observation)
    }
  }

  func pushRef(_ ref: Int32, on s: LuaStack) {
    stack.pushRef(ref)
    if s.L != L { lua_xmove(L, s.L, 1) }
  }

  /// `p:observe(f, { initial = bool, keys = { "fraction", … }, every = bool })`: calls `f`
  /// with the node after it (or a node below it) changes: at most 15 times a second from the
  /// loop, or at every change with `every`; with `keys`, only when one of those fields
  /// changed; with `initial`, once at once. Returns the observation (`:cancel()` ends it).
  func observe(_ node: ProgressNode, _ s: LuaStack) throws -> Int32 {
    guard s.type(2) == LUA_TFUNCTION else { throw s.badArgument(2, "observe", "function") }
    var initial = false, every = false, keys: [String]?
    if !s.isNil(3) {
      guard s.type(3) == LUA_TTABLE else { throw s.badArgument(3, "observe", "table { initial =, keys =, every = }") }
      try checkFields(s, 3, valid: ["initial", "keys", "every"], in: "observe")
      initial = try optionalBoolean(s, 3, "initial", in: "observe") ?? false
      every = try optionalBoolean(s, 3, "every", in: "observe") ?? false
      if s.rawGet(3, "keys") != LUA_TNIL {
        keys = try observedKeys(s, s.top)
      }
      s.pop()
    }
    s.pushValue(2)
    if s.L != L { lua_xmove(s.L, L, 1) }
    let observation = ProgressObservation(
      id: progressHandles.observations.count, node: node, function: stack.ref(), keys: keys, every: every)
    progressHandles.observations.append(observation)
    let id = ObjectIdentifier(node)
    if every { progressHandles.everyCount += 1 }
    if progressHandles.observers[id] == nil {
      let previous = node.onChange
      node.onChange = { [unowned self] changed in
        previous?(changed)
        observedChange(of: id)
      }
    }
    progressHandles.observers[id, default: []].append(observation)
    if initial { tell(observation) }
    pushHandle(.observation, id: observation.id, on: s)
    return 1
  }

  /// The list of field names at `i` (`keys = { … }`), each one an observable field.
  private func observedKeys(_ s: LuaStack, _ i: Int32) throws -> [String] {
    guard s.type(i) == LUA_TTABLE else { throw ScriptError("observe: 'keys' must be a list of field names") }
    var keys: [String] = []
    for k in 0..<s.rawLength(i) {
      s.rawGet(i, k + 1)
      defer { s.pop() }
      guard let key = s.string(-1), ProgressObservation.observable.contains(key) else {
        throw ScriptError(
          "observe: 'keys' must name fields of a progress ("
            + ProgressObservation.observable.joined(separator: ", ") + "), got \(s.describe(-1))")
      }
      keys.append(key)
    }
    guard !keys.isEmpty else { throw ScriptError("observe: 'keys' must name at least one field") }
    return keys
  }

  /// Ends an observation: its function is not called again.
  func unobserve(_ observation: ProgressObservation) {
    guard observation.active else { return }
    observation.active = false
    if observation.every { progressHandles.everyCount -= 1 }
    let id = ObjectIdentifier(observation.node)
    progressHandles.observers[id]?.removeAll { $0 === observation }
    stack.unref(observation.function)
  }

  /// A node with observers (or one below it) changed: those told every change are called
  /// now, the others from the loop, together, at most 15 times a second.
  private func observedChange(of id: ObjectIdentifier) {
    guard let list = progressHandles.observers[id], !list.isEmpty else { return }
    var coalesced = false
    for observation in list {
      if !observation.every {
        coalesced = true
      } else if observation.active, observation.changed() {
        tell(observation)
      }
    }
    guard coalesced, progressHandles.observedDirty.insert(id).inserted else { return }
    guard !progressHandles.flushScheduled else { return }
    progressHandles.flushScheduled = true
    scheduler.after(1.0 / 15) { [unowned self] in flushObservers() }
  }

  func flushObservers() {
    progressHandles.flushScheduled = false
    let dirty = progressHandles.observedDirty
    progressHandles.observedDirty = []
    for id in dirty {
      for observation in progressHandles.observers[id] ?? [] where !observation.every {
        guard observation.active, observation.changed() else { continue }
        tell(observation)
      }
    }
  }

  // MARK: User info

  /// `p.user_info`: a new table with the node's user info (changing it changes nothing).
  func pushUserInfo(_ node: ProgressNode, on s: LuaStack) {
    s.newTable(hash: Int32(node.userInfo.count))
    for (key, value) in node.userInfo {
      switch value {
      case .text(let text): s.push(text)
      case .number(let number) where number.rounded() == number && number.magnitude <= 0x1p53: s.push(Int(number))
      case .number(let number): s.push(number)
      case .flag(let flag): s.push(flag)
      }
      s.rawSet(-2, key)
    }
  }

  /// `p.user_info = { key = value, … }`: replaces all of it (nil: empties it).
  func replaceUserInfo(_ node: ProgressNode, value i: Int32, _ s: LuaStack) throws {
    if s.isNil(i) { return node.userInfo = [:] }
    guard s.type(i) == LUA_TTABLE else {
      throw ScriptError("progress: 'user_info' must be a table (got \(s.typeName(i)))")
    }
    var info: [String: ProgressNode.InfoValue] = [:]
    for key in s.keys(i) {
      guard case .name(let name) = key else { throw ScriptError("progress: the keys of 'user_info' must be strings") }
      s.rawGet(i, name)
      defer { s.pop() }
      info[try userInfoKey(name)] = try userInfoValue(s, s.top, name)
    }
    guard info.count <= Self.maxUserInfo else {
      throw ScriptError("progress: 'user_info' may hold at most \(Self.maxUserInfo) keys (got \(info.count))")
    }
    node.userInfo = info
  }

  /// `p:set_user_info(key, value)`, Foundation's `setUserInfoObject(_:forKey:)`; nil removes.
  func setUserInfo(_ node: ProgressNode, key: String, value i: Int32, _ s: LuaStack) throws {
    let key = try userInfoKey(key)
    if s.isNil(i) { return node.userInfo[key] = nil }
    let value = try userInfoValue(s, i, key)
    guard node.userInfo[key] != nil || node.userInfo.count < Self.maxUserInfo else {
      throw ScriptError("progress: 'user_info' may hold at most \(Self.maxUserInfo) keys")
    }
    node.userInfo[key] = value
  }

  static let maxUserInfo = 64

  private func userInfoKey(_ key: String) throws -> String {
    guard !key.isEmpty, key.utf8.count <= 100 else {
      throw ScriptError("progress: a 'user_info' key must be 1 to 100 bytes")
    }
    return try displayText(key, "progress: 'user_info' key")
  }

  private func userInfoValue(_ s: LuaStack, _ i: Int32, _ key: String) throws -> ProgressNode.InfoValue {
    switch s.type(i) {
    case LUA_TBOOLEAN: return .flag(s.boolean(i))
    case LUA_TNUMBER: return .number(try LuaNumber.finite(s.number(i)!, "progress: user_info '\(key)'"))
    case LUA_TSTRING:
      let text = s.string(i)!
      guard text.utf8.count <= 1000 else {
        throw ScriptError("progress: user_info '\(key)' must be at most 1000 bytes")
      }
      return .text(try displayText(text, "progress: user_info '\(key)'"))
    default:
      throw ScriptError("progress: user_info '\(key)' must be a string, number or boolean (got \(s.typeName(i)))")
    }
  }

  func reportWarning(_ message: String) {
    TerminalText.writeMessage("taskrun: \(message)")
  }
}
