// Handles: engine objects seen from Lua, one stable value per object.
import CLua
import CLuaShim
import TaskEngine

/// The kinds of engine object Lua holds handles to; each is declared by its noun
/// (`operationNoun`, `queueNoun`, `progressNoun`, `observationNoun`).
enum HandleKind: Int, CaseIterable {
  case operation, queue, progress, observation
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
  /// The noun of each handle kind, by `HandleKind.rawValue` (as a `luaL_Reg` lists a
  /// library): the name its metatable carries, and how to bind it.
  static let nounRegistry: [(name: String, bind: @Sendable () -> NounBinding)] = [
    ("operation", { operationNoun.binding() }),
    ("queue", { queueNoun.binding() }),
    ("progress", { progressNoun.binding() }),
    ("observation", { observationNoun.binding() })
  ]

  /// The noun of `kind`, bound the first time a handle of that kind is read, written or
  /// described (a run that only declares operations binds none: start-up stays as cheap);
  /// its methods go into the kind's method table then.
  func noun(_ kind: HandleKind) -> NounBinding {
    if let noun = handles.nouns[kind.rawValue] { return noun }
    let noun = Self.nounRegistry[kind.rawValue].bind()
    precondition(noun.kind == kind && noun.name == Self.nounRegistry[kind.rawValue].name, "one noun per handle kind")
    let s = stack
    s.pushRef(handles.methods[kind]!)
    for (name, method) in noun.methods {
      pushFunction(method)
      s.rawSet(-2, name)
    }
    s.pop()
    handles.nouns[kind.rawValue] = noun
    return noun
  }

  /// Creates the metatable, method table (the noun fills it when bound) and handle cache of
  /// each kind.
  func installHandleKinds() {
    let s = stack
    for kind in HandleKind.allCases {
      s.newTable()
      handles.caches[kind] = s.ref()
      s.newTable()
      handles.methods[kind] = s.ref()
      pushMarkerMetatable(Self.nounRegistry[kind.rawValue].name) { host, s in host.describe(kind, s) }
      pushFunction { host, s in try host.index(kind, s) }
      s.rawSet(-2, "__index")
      pushFunction { host, s in try host.newIndex(kind, s) }
      s.rawSet(-2, "__newindex")
      handles.metatableAddresses[kind.rawValue] = lua_topointer(L, -1)
      handles.metatables[kind] = s.ref()
    }
  }

  /// Pushes the one handle of object `id`, creating it on first use (so `==` holds).
  /// Operations and queues are userdata holding their id. A progress is a table holding its
  /// id under a private key, so that `p.completed = n` can be a raw store (see ProgressSync).
  func pushHandle(_ kind: HandleKind, id: Int) {
    let s = stack
    s.pushRef(handles.caches[kind]!)
    if s.rawGet(-1, id) == LUA_TNIL {
      s.pop()
      if kind == .progress {
        s.newTable(hash: 2)
        tl_pushlightuserdata(L, handles.progressKey)
        s.push(id)
        lua_rawset(L, -3)
      } else {
        let box = tl_newuserdata(L, MemoryLayout<Int>.size)!
        box.storeBytes(of: id, as: Int.self)
      }
      s.pushRef(handles.metatables[kind]!)
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
      guard s.type(i) == LUA_TTABLE, hasMetatable(handles.metatableAddresses[kind.rawValue], at: i, on: s) else {
        return nil
      }
      return progressID(inHandle: i, on: s)
    }
    // Being the very value cached at its id makes it a handle of this kind (its metatable too).
    guard s.type(i) == LUA_TUSERDATA, lua_rawlen(s.L, i) == MemoryLayout<Int>.size,
      let box = lua_touserdata(s.L, i)
    else { return nil }
    let id = box.load(as: Int.self)
    return isCached(handles.caches[kind]!, id, at: i, on: s) ? id : nil
  }

  /// The id a progress handle keeps under its private key, if it is still its own.
  func progressID(inHandle i: Int32, on s: LuaStack) -> Int? {
    let table = s.absolute(i)
    tl_pushlightuserdata(s.L, handles.progressKey)
    lua_rawget(s.L, table)
    var isInteger: Int32 = 0
    let id = lua_tointegerx(s.L, -1, &isInteger)
    s.pop()
    guard isInteger != 0, id >= 0, id < progressHandles.nodes.count else { return nil }
    return isCached(handles.caches[.progress]!, Int(id), at: table, on: s) ? Int(id) : nil
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

  func operation(at i: Int32, on s: LuaStack) -> OperationNode? {
    handleID(.operation, at: i, on: s).map(scheduler.operation(id:))
  }

  func queue(at i: Int32, on s: LuaStack) -> WorkQueue? {
    handleID(.queue, at: i, on: s).map { scheduler.queues[$0] }
  }

  /// `__index` of every handle kind: the noun's raw path, a method, then a field.
  func index(_ kind: HandleKind, _ s: LuaStack) throws -> Int32 {
    let noun = self.noun(kind)
    if let raw = noun.rawIndex, try raw(self, s) { return 1 }
    guard let key = s.string(2) else { s.pushNil(); return 1 }
    s.pushRef(handles.methods[kind]!)
    if s.rawGet(-1, key) != LUA_TNIL { return 1 }
    s.pop(2)
    guard let id = handleID(kind, at: 1, on: s) else { throw ScriptError("\(noun.name) expected") }
    try noun.get(self, s, id, key)
    return 1
  }

  /// `__newindex` of every handle kind: the noun's raw path, then a field's setter.
  func newIndex(_ kind: HandleKind, _ s: LuaStack) throws -> Int32 {
    let noun = self.noun(kind)
    if let raw = noun.rawNewIndex, try raw(self, s) { return 0 }
    guard let key = s.string(2) else { throw ScriptError("\(noun.name) fields are named by strings") }
    if noun.readOnly { try noun.set(self, s, nil, key, 3) }  // refuses, whatever the handle
    guard let id = handleID(kind, at: 1, on: s) else { throw ScriptError("\(noun.name) expected") }
    try noun.set(self, s, id, key, 3)
    return 0
  }

  /// `__tostring` of every handle kind (the REPL shows it too).
  func describe(_ kind: HandleKind, _ s: LuaStack) -> String {
    let noun = self.noun(kind)
    guard let id = handleID(kind, at: 1, on: s) else { return noun.name }
    return noun.describe(self, id)
  }
}
