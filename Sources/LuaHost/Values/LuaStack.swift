// LuaStack: typed, non-raising access to a Lua stack (only `-` and `m` API functions).
import CLua
import CLuaShim

/// A view of one Lua thread's stack. Every call here is one that cannot longjmp (the manual's
/// `-` class) or can only on out-of-memory (`m`), so it is safe from Swift frames.
struct LuaStack {
  let L: OpaquePointer

  var top: Int32 { lua_gettop(L) }
  func setTop(_ n: Int32) { lua_settop(L, n) }
  func pop(_ n: Int32 = 1) { tl_pop(L, n) }
  func absolute(_ i: Int32) -> Int32 { lua_absindex(L, i) }

  func type(_ i: Int32) -> Int32 { lua_type(L, i) }
  func isNil(_ i: Int32) -> Bool { lua_type(L, i) <= LUA_TNIL }
  func typeName(_ i: Int32) -> String { String(cString: lua_typename(L, lua_type(L, i))) }

  /// The string at `i` (strings only: numbers are not converted in place).
  func string(_ i: Int32) -> String? {
    guard lua_type(L, i) == LUA_TSTRING else { return nil }
    var length = 0
    guard let chars = tl_tolstring(L, i, &length) else { return nil }
    return String(decoding: UnsafeRawBufferPointer(start: chars, count: length), as: UTF8.self)
  }

  /// The string at `i`, and whether it holds printable ASCII only (read in place with it: the
  /// common case of a name then needs no String-level check, `DisplayText`, after it).
  func string(_ i: Int32, plain: inout Bool) -> String? {
    guard lua_type(L, i) == LUA_TSTRING else { return nil }
    var length = 0
    guard let chars = tl_tolstring(L, i, &length) else { return nil }
    plain = tl_plain_text(chars, length) != 0
    return String(decoding: UnsafeRawBufferPointer(start: chars, count: length), as: UTF8.self)
  }

  /// Where the function at `level` of the call stack is (1: the Lua code that called the
  /// host function), as error messages start: `file:line:`, or nil if Lua does not know.
  func place(_ level: Int32 = 1) -> String? {
    luaL_where(L, level)
    defer { pop() }
    guard let place = string(-1), place.hasSuffix(": ") else { return nil }  // "" when unknown
    return String(place.dropLast())
  }

  /// A string, or a number written as Lua would (for env values and argv words).
  func stringOrNumber(_ i: Int32) -> String? {
    if let s = string(i) { return s }
    guard lua_type(L, i) == LUA_TNUMBER else { return nil }
    lua_pushvalue(L, i)
    defer { pop() }
    var length = 0
    guard let chars = tl_tolstring(L, -1, &length) else { return nil }  // converts the copy
    return String(decoding: UnsafeRawBufferPointer(start: chars, count: length), as: UTF8.self)
  }

  func number(_ i: Int32) -> Double? {
    var ok: Int32 = 0
    let value = lua_tonumberx(L, i, &ok)
    return lua_type(L, i) == LUA_TNUMBER && ok != 0 ? value : nil
  }

  func integer(_ i: Int32) -> Int? {
    var ok: Int32 = 0
    let value = lua_tointegerx(L, i, &ok)
    return lua_type(L, i) == LUA_TNUMBER && ok != 0 ? Int(value) : nil
  }

  func boolean(_ i: Int32) -> Bool { lua_toboolean(L, i) != 0 }

  func push(_ s: String) {
    var s = s
    s.withUTF8 { buffer in
      buffer.withMemoryRebound(to: CChar.self) { _ = lua_pushlstring(L, $0.baseAddress, $0.count) }
    }
  }
  func push(_ n: Double) { lua_pushnumber(L, n) }
  func push(_ n: Int) { lua_pushinteger(L, lua_Integer(n)) }
  func push(_ b: Bool) { lua_pushboolean(L, b ? 1 : 0) }
  func pushNil() { lua_pushnil(L) }
  func pushValue(_ i: Int32) { lua_pushvalue(L, i) }
  func newTable(array: Int32 = 0, hash: Int32 = 0) { lua_createtable(L, array, hash) }

  /// Pushes t[key] without metamethods; returns its type.
  @discardableResult
  func rawGet(_ table: Int32, _ key: String) -> Int32 {
    let t = absolute(table)
    push(key)
    return lua_rawget(L, t)
  }
  /// t[key] = value on top (popped), without metamethods.
  func rawSet(_ table: Int32, _ key: String) {
    let t = absolute(table)
    push(key)
    lua_rotate(L, -2, 1)
    lua_rawset(L, t)
  }
  @discardableResult
  func rawGet(_ table: Int32, _ index: Int) -> Int32 { lua_rawgeti(L, table, lua_Integer(index)) }
  func rawSet(_ table: Int32, _ index: Int) { lua_rawseti(L, table, lua_Integer(index)) }
  func rawLength(_ i: Int32) -> Int { Int(lua_rawlen(L, i)) }

  /// Anchors the value on top in the registry (popping it) and returns the reference.
  func ref() -> Int32 { luaL_ref(L, tl_registryindex()) }
  func pushRef(_ ref: Int32) { lua_rawgeti(L, tl_registryindex(), lua_Integer(ref)) }
  func unref(_ ref: Int32) { luaL_unref(L, tl_registryindex(), ref) }

  /// `tostring(v)`, bounded (tl_safe_tostring), so a __tostring that raises or never ends
  /// cannot escape or hang the host.
  func describe(_ i: Int32) -> String {
    if let s = string(i) { return s }
    guard tl_safe_tostring(L, i) == LUA_OK else {
      pop()
      return "(error object is a \(typeName(i)) value)"
    }
    defer { pop() }
    return string(-1) ?? "?"
  }

  /// An error value as a message, as lua.c's message handler makes it: strings and numbers
  /// as they are, objects whose __tostring gives a string converted (bounded, like every
  /// metamethod the host calls), anything else "(error object is a table value)".
  func errorMessage(_ i: Int32) -> String {
    if let s = stringOrNumber(i) { return s }
    let i = absolute(i)
    guard lua_checkstack(L, 3) != 0, luaL_getmetafield(L, i, "__tostring") != LUA_TNIL else {
      return "(error object is a \(typeName(i)) value)"
    }
    pushValue(i)
    defer { pop() }
    guard tl_bounded_call(L, 1, 1, "an error object's __tostring") == LUA_OK else {
      let why = stringOrNumber(-1) ?? "a \(typeName(-1)) value"
      return "(error object is a \(typeName(i)) value; its __tostring failed: \(why))"
    }
    return string(-1) ?? "(error object is a \(typeName(i)) value)"
  }

  /// The keys of the table at `i` (strings as they are, other keys as their type).
  func keys(_ i: Int32) -> [TableKey] {
    let t = absolute(i)
    var keys: [TableKey] = []
    pushNil()
    while tl_next(L, t) != 0 {
      if let s = string(-2) {
        keys.append(.name(s))
      } else if let n = integer(-2) {
        keys.append(.index(n))
      } else {
        keys.append(.other(typeName(-2)))
      }
      pop()
    }
    return keys
  }

  enum TableKey: Equatable { case name(String), index(Int), other(String) }
}
