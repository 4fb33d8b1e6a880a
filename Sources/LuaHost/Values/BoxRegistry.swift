// BoxRegistry: Lua values that are only a box around a Swift value (conditions, observers).
import CLua
import CLuaShim

/// The values of one kind Lua holds as boxes: userdata holding an index into `values`, so Lua
/// cannot change what a box stands for, each cached at its index so a look-alike is not one.
/// Its metatable marks the kind (`__name`, `__tostring`, `__metatable`); metatables are
/// anchored for the state's life, so its address identifies a box. A class: making a box
/// allocates in Lua, which may run finalizers that make boxes too (no access may span it).
final class BoxRegistry<Value> {
  private(set) var values: [Value] = []
  private var meta: Int32 = LUA_NOREF
  private var metaAddress: UnsafeRawPointer?
  private var boxes: Int32 = LUA_NOREF

  /// Takes the metatable on top of the host's stack (made by `pushMarkerMetatable`) and makes
  /// the box cache.
  func install(_ host: ScriptHost) {
    metaAddress = lua_topointer(host.L, -1)
    meta = host.stack.ref()
    host.stack.newTable()
    boxes = host.stack.ref()
  }

  /// Keeps `value` and pushes its box onto `s`.
  func push(_ value: Value, host: ScriptHost, on s: LuaStack) {
    values.append(value)
    let index = values.count - 1
    let box = tl_newuserdata(s.L, MemoryLayout<Int>.size)!
    box.storeBytes(of: index, as: Int.self)
    host.pushRef(meta, on: s)
    lua_setmetatable(s.L, -2)
    host.pushRef(boxes, on: s)
    s.pushValue(-2)
    lua_rawseti(s.L, -2, lua_Integer(index))
    s.pop()
  }

  /// The value whose box is at `i`, if it is one of these boxes.
  func value(at i: Int32, host: ScriptHost, on s: LuaStack) -> Value? {
    guard s.type(i) == LUA_TUSERDATA, lua_rawlen(s.L, i) == MemoryLayout<Int>.size,
      let box = lua_touserdata(s.L, i), host.hasMetatable(metaAddress, at: i, on: s)
    else { return nil }
    let index = box.load(as: Int.self)
    guard index >= 0, index < values.count, host.isCached(boxes, index, at: i, on: s) else { return nil }
    return values[index]
  }
}
