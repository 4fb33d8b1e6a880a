// Handles: engine objects seen from Lua, one stable value per object.
import CLua
import CLuaShim
import TaskEngine

/// The kinds of engine object Lua holds handles to.
enum HandleKind: Int, CaseIterable {
  case operation, queue, progress

  var luaName: String {
    switch self {
    case .operation: "operation"
    case .queue: "queue"
    case .progress: "progress"
    }
  }
}

/// A registry reference per handle kind, stored flat: a dictionary would hash on every push.
struct PerKind {
  private var refs = [Int32](repeating: LUA_NOREF, count: HandleKind.allCases.count)
  subscript(kind: HandleKind) -> Int32? {
    get { refs[kind.rawValue] }
    set { refs[kind.rawValue] = newValue ?? LUA_NOREF }
  }
}

extension ScriptHost {
  /// Creates the metatable, method table and handle cache of each kind.
  func installHandleKinds() {
    let s = stack
    for kind in HandleKind.allCases {
      s.newTable()
      handleTables[kind] = s.ref()
      s.newTable()
      for (name, method) in methods(of: kind) {
        pushFunction(method)
        s.rawSet(-2, name)
      }
      methodTables[kind] = s.ref()
      pushMarkerMetatable(kind.luaName) { host, s in host.describe(kind, s) }
      pushFunction { host, s in try host.index(kind, s) }
      s.rawSet(-2, "__index")
      pushFunction { host, s in try host.newIndex(kind, s) }
      s.rawSet(-2, "__newindex")
      metatableAddresses[kind.rawValue] = lua_topointer(L, -1)
      metatables[kind] = s.ref()
    }
  }

  func methods(of kind: HandleKind) -> [(String, HostFunction)] {
    switch kind {
    case .operation: operationMethods()
    case .queue: queueMethods()
    case .progress: progressMethods()
    }
  }

  /// Pushes the one handle of object `id`, creating it on first use (so `==` holds).
  /// Operations and queues are userdata holding their id. A progress is a table holding its
  /// id under a private key, so that `p.completed = n` can be a raw store (see ProgressSync).
  func pushHandle(_ kind: HandleKind, id: Int) {
    let s = stack
    s.pushRef(handleTables[kind]!)
    if s.rawGet(-1, id) == LUA_TNIL {
      s.pop()
      if kind == .progress {
        s.newTable(hash: 2)
        tl_pushlightuserdata(L, handleKey)
        s.push(id)
        lua_rawset(L, -3)
      } else {
        let box = tl_newuserdata(L, MemoryLayout<Int>.size)!
        box.storeBytes(of: id, as: Int.self)
      }
      s.pushRef(metatables[kind]!)
      lua_setmetatable(L, -2)
      s.pushValue(-1)
      s.rawSet(-3, id)
    }
    lua_rotate(L, -2, 1)
    s.pop()
  }

  /// Pushes a handle onto another thread's stack.
  func pushHandle(_ kind: HandleKind, id: Int, on s: LuaStack) {
    pushHandle(kind, id: id)
    if s.L != L { lua_xmove(L, s.L, 1) }
  }

  /// The object a method was called on (`op:cancel()`), as the id in its handle; a clear
  /// error when the method was called with `.` or on something else.
  func receiverID(_ kind: HandleKind, _ s: LuaStack, _ method: String) throws -> Int {
    guard let id = handleID(kind, at: 1, on: s) else {
      let variable = ["operation": "op", "queue": "q", "progress": "p"][kind.luaName] ?? "x"
      throw ScriptError("bad self for '\(method)' (\(kind.luaName) expected, got \(s.typeName(1)); use \(variable):\(method)(...))")
    }
    return id
  }

  /// Pushes a metatable that marks our values: `__name`, `__tostring` from `describe`, and
  /// `__metatable` so that getmetatable() gives only the name and Lua code cannot call the
  /// metamethods with something else (they may trust their first argument).
  func pushMarkerMetatable(_ name: String, describe: @escaping (ScriptHost, LuaStack) -> String) {
    let s = stack
    s.newTable(hash: 5)
    s.push(name)
    s.rawSet(-2, "__name")
    s.push(name)
    s.rawSet(-2, "__metatable")
    pushFunction { host, s in
      s.push(describe(host, s))
      return 1
    }
    s.rawSet(-2, "__tostring")
  }

  /// Whether the value at `i` has the metatable at `address` (marks our handles and values;
  /// metatables are anchored for the state's life, so their addresses are stable).
  func hasMetatable(_ address: UnsafeRawPointer?, at i: Int32, on s: LuaStack) -> Bool {
    guard lua_getmetatable(s.L, i) != 0 else { return false }
    defer { s.pop() }
    return lua_topointer(s.L, -1) == address
  }

  /// Adds to the metatable on top a `__newindex` that refuses every write.
  func refuseWrites(_ kind: String) {
    pushFunction { _, _ in throw ScriptError("\(kind) cannot be changed") }
    stack.rawSet(-2, "__newindex")
  }

  /// Pushes a list of operation handles.
  func pushOperations(_ ops: [OperationNode], on s: LuaStack) {
    s.newTable(array: Int32(ops.count))
    for (i, op) in ops.enumerated() {
      pushHandle(.operation, id: op.id, on: s)
      s.rawSet(-2, i + 1)
    }
  }

  /// The id inside the handle at `i` if it is a handle of `kind`. Handles cannot be forged:
  /// the id must be the one cached for this very value, so a progress table whose private
  /// key was overwritten (`rawset(p, next(p), 1000)`), or another value given a handle's
  /// metatable with `debug.setmetatable`, is not a handle.
  func handleID(_ kind: HandleKind, at i: Int32, on s: LuaStack) -> Int? {
    if kind == .progress {
      guard s.type(i) == LUA_TTABLE, hasMetatable(metatableAddresses[kind.rawValue], at: i, on: s) else { return nil }
      return progressID(inHandle: i, on: s)
    }
    // Being the very value cached at its id makes it a handle of this kind (its metatable too).
    guard s.type(i) == LUA_TUSERDATA, lua_rawlen(s.L, i) == MemoryLayout<Int>.size,
          let box = lua_touserdata(s.L, i) else { return nil }
    let id = box.load(as: Int.self)
    return isCached(handleTables[kind]!, id, at: i, on: s) ? id : nil
  }

  /// The id a progress handle keeps under its private key, if it is still its own.
  func progressID(inHandle i: Int32, on s: LuaStack) -> Int? {
    let table = s.absolute(i)
    tl_pushlightuserdata(s.L, handleKey)
    lua_rawget(s.L, table)
    var isInteger: Int32 = 0
    let id = lua_tointegerx(s.L, -1, &isInteger)
    s.pop()
    guard isInteger != 0, id >= 0, id < progressNodes.count else { return nil }
    return isCached(handleTables[.progress]!, Int(id), at: table, on: s) ? Int(id) : nil
  }

  /// Whether the value at `i` is the one the registry table `cache` holds at `id`.
  func isCached(_ cache: Int32, _ id: Int, at i: Int32, on s: LuaStack) -> Bool {
    let value = s.absolute(i)
    _ = lua_checkstack(s.L, 2)
    pushRef(cache, on: s)
    lua_rawgeti(s.L, -1, lua_Integer(id))
    defer { s.pop(2) }
    return lua_rawequal(s.L, -1, value) != 0
  }

  /// A value that is only a box around an index into a Swift array (conditions, observers):
  /// userdata, so Lua cannot change what it holds, cached in `cache` so a look-alike is not it.
  func pushBox(_ index: Int, cache: Int32, meta: Int32, on s: LuaStack) {
    let box = tl_newuserdata(s.L, MemoryLayout<Int>.size)!
    box.storeBytes(of: index, as: Int.self)
    pushRef(meta, on: s)
    lua_setmetatable(s.L, -2)
    pushRef(cache, on: s)
    s.pushValue(-2)
    lua_rawseti(s.L, -2, lua_Integer(index))
    s.pop()
  }

  /// The index in the box at `i` if it is one of `cache`'s boxes with metatable `address`.
  func boxIndex(at i: Int32, address: UnsafeRawPointer?, cache: Int32, count: Int, on s: LuaStack) -> Int? {
    guard s.type(i) == LUA_TUSERDATA, lua_rawlen(s.L, i) == MemoryLayout<Int>.size,
          let box = lua_touserdata(s.L, i), hasMetatable(address, at: i, on: s) else { return nil }
    let index = box.load(as: Int.self)
    guard index >= 0, index < count, isCached(cache, index, at: i, on: s) else { return nil }
    return index
  }

  func operation(at i: Int32, on s: LuaStack) -> OperationNode? {
    handleID(.operation, at: i, on: s).map(scheduler.operation(id:))
  }

  func queue(at i: Int32, on s: LuaStack) -> WorkQueue? {
    handleID(.queue, at: i, on: s).map { scheduler.queues[$0] }
  }

  func index(_ kind: HandleKind, _ s: LuaStack) throws -> Int32 {
    if kind == .progress, let key = lua_tolstring(s.L, 2, nil), key == hotKeys.completed {
      // Reached only while the handle is not armed (see ProgressSync).
      guard let node = progress(at: 1, on: s) else { throw ScriptError("progress expected") }
      s.push(Int(node.completed))
      return 1
    }
    guard let key = s.string(2) else { s.pushNil(); return 1 }
    s.pushRef(methodTables[kind]!)
    if s.rawGet(-1, key) != LUA_TNIL { return 1 }
    s.pop(2)
    switch kind {
    case .operation:
      guard let op = operation(at: 1, on: s) else { throw ScriptError("operation expected") }
      return try operationField(op, key, s)
    case .queue:
      guard let queue = queue(at: 1, on: s) else { throw ScriptError("queue expected") }
      return try queueField(queue, key, s)
    case .progress:
      guard let node = progress(at: 1, on: s) else { throw ScriptError("progress expected") }
      return try progressField(node, key, s)
    }
  }

  func newIndex(_ kind: HandleKind, _ s: LuaStack) throws -> Int32 {
    if kind == .progress, let key = lua_tolstring(s.L, 2, nil), key == hotKeys.completed,
       let value = s.integer(3), value.magnitude <= 1 << 53 {  // else LuaNumber.whole refuses it below
      guard let id = handleID(.progress, at: 1, on: s) else { throw ScriptError("progress expected") }
      armProgress(id: id, value: value, on: s)
      return 0
    }
    guard let key = s.string(2) else { throw ScriptError("\(kind.luaName) fields are named by strings") }
    switch kind {
    case .operation:
      throw ScriptError("cannot set '\(key)': the fields of an operation are read-only (set them in operation{})")
    case .queue:
      guard let queue = queue(at: 1, on: s) else { throw ScriptError("queue expected") }
      try setQueueField(queue, key, s)
      return 0
    case .progress:
      guard let node = progress(at: 1, on: s) else { throw ScriptError("progress expected") }
      try setProgressField(node, key, value: 3, s)
      return 0
    }
  }

  func describe(_ kind: HandleKind, _ s: LuaStack) -> String {
    switch kind {
    case .operation:
      guard let op = operation(at: 1, on: s) else { return "operation" }
      var parts = [op.state.rawValue]
      if let outcome = op.outcome { parts.append(outcome.rawValue) }
      if let duration = op.duration { parts.append(formatFixed(duration, 2) + " s") }
      return "<operation \(op.name): \(parts.joined(separator: ", "))>"
    case .queue:
      guard let queue = queue(at: 1, on: s) else { return "queue" }
      let limit = queue.maxConcurrent < 0 ? "unlimited" : "max \(queue.maxConcurrent)"
      return "<queue \(queue.name): \(queue.count) operations, \(queue.running) running, \(limit)"
        + (queue.isSuspended ? ", suspended>" : ">")
    case .progress:
      guard let node = progress(at: 1, on: s) else { return "progress" }
      var state = node.isCancelled ? ", cancelled" : node.isPaused ? ", paused" : ""
      if node.isFinished { state += ", finished" }
      return "<progress \(node.completed) of \(node.total): \(node.localizedDescription)\(state)>"
    }
  }
}
