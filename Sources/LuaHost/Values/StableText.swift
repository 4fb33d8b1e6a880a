// StableText: a Lua value as Lua literal text that is the same from run to run (keys sorted), for fingerprints and kept results.
import CLua
import CLuaShim
import FoundationEssentials

/// Writes nil, booleans, numbers, strings and tables of them (acyclic, keys sorted) as a Lua
/// literal: equal values give equal text, and `load("return " .. text)` gives the value back.
/// Anything else (a function, a userdata, a coroutine, a cycle, too deep or too long) is
/// refused with the path to it ("flags[2] is a function").
struct StableText {
  let L: OpaquePointer
  /// Bytes the text may have.
  var limit = 1 << 20
  private var text: [UInt8] = []
  private var open: [UnsafeRawPointer] = []

  /// Whether a float with an integral value is written as the integer (a fingerprint's `key`,
  /// where 1.0 and 1 are the same value); a kept result keeps each number's type.
  var normalizing = false

  init(L: OpaquePointer, limit: Int = 1 << 20, normalizing: Bool = false) {
    self.L = L
    self.limit = limit
    self.normalizing = normalizing
  }

  struct Refused: Error, CustomStringConvertible {
    let description: String
  }

  /// The value at `i` as text.
  static func of(_ L: OpaquePointer, _ i: Int32, name: String, limit: Int = 1 << 20, normalizing: Bool = false)
    throws(Refused) -> String
  {
    var writer = StableText(L: L, limit: limit, normalizing: normalizing)
    try writer.write(lua_absindex(L, i), path: name, depth: 0)
    return String(decoding: writer.text, as: UTF8.self)
  }

  /// A float as Lua reads it back (no `math` is needed: the text is loaded with no globals).
  static func float(_ n: Double, normalizing: Bool) -> String {
    if n.isNaN { return "(0/0)" }
    if n.isInfinite { return n > 0 ? "(1/0)" : "(-1/0)" }
    if normalizing, n == n.rounded(), abs(n) < 9.0e15 { return String(Int64(n)) }  // 1.0 is 1, as Lua compares them
    let text = "\(n)"  // shortest round trip: "7.0", "1e+15", "-0.0"
    return text.contains(where: { $0 == "." || $0 == "e" }) ? text : text + ".0"
  }

  private mutating func append(_ s: String) throws(Refused) {
    text.append(contentsOf: s.utf8)
    if text.count > limit { throw Refused(description: "it is longer than \(limit) bytes as text") }
  }

  private mutating func write(_ i: Int32, path: String, depth: Int) throws(Refused) {
    switch lua_type(L, i) {
    case LUA_TNIL: try append("nil")
    case LUA_TBOOLEAN: try append(lua_toboolean(L, i) != 0 ? "true" : "false")
    case LUA_TNUMBER:
      if lua_isinteger(L, i) != 0 {
        let n = lua_tointegerx(L, i, nil)
        try append(n == .min ? "(-9223372036854775807-1)" : String(n))  // the literal would read as a float
      } else {
        try append(Self.float(lua_tonumberx(L, i, nil), normalizing: normalizing))
      }
    case LUA_TSTRING:
      var length = 0
      let bytes = lua_tolstring(L, i, &length)!
      try quote(UnsafeRawBufferPointer(start: bytes, count: length))
    case LUA_TTABLE:
      let pointer = lua_topointer(L, i)!
      guard !open.contains(pointer) else { throw Refused(description: "\(path) holds itself (a cycle)") }
      guard depth < 32 else { throw Refused(description: "\(path) is nested more than 32 deep") }
      guard lua_checkstack(L, 4) != 0 else { throw Refused(description: "\(path) is too deep") }
      open.append(pointer)
      defer { open.removeLast() }
      // Keys sorted: numbers first (by value), then strings (by bytes); others are refused.
      var numbers: [Double] = [], strings: [[UInt8]] = [], booleans: [Bool] = []
      let base = lua_gettop(L)
      lua_pushnil(L)
      while tl_next(L, i) != 0 {
        switch lua_type(L, -2) {
        case LUA_TNUMBER:
          numbers.append(lua_tonumberx(L, -2, nil))
        case LUA_TSTRING:
          var length = 0
          let bytes = lua_tolstring(L, -2, &length)!
          strings.append(Array(UnsafeRawBufferPointer(start: bytes, count: length)))
        case LUA_TBOOLEAN:
          booleans.append(lua_toboolean(L, -2) != 0)
        default:
          let kind = String(cString: lua_typename(L, lua_type(L, -2)))
          lua_settop(L, base)
          throw Refused(description: "\(path) has a \(kind) key")
        }
        lua_settop(L, -2)
      }
      try append("{")
      var first = true
      for b in booleans.sorted(by: { !$0 && $1 }) {
        if !first { try append(",") }
        first = false
        try append(b ? "[true]=" : "[false]=")
        lua_pushboolean(L, b ? 1 : 0)
        lua_rawget(L, i)
        defer { lua_settop(L, base) }
        try write(lua_gettop(L), path: "\(path)[\(b)]", depth: depth + 1)
      }
      for n in numbers.sorted() {
        if !first { try append(",") }
        first = false
        let isInteger = n == n.rounded() && abs(n) < 9.0e15
        try append(isInteger ? "[\(Int64(n))]=" : "[\(Self.float(n, normalizing: false))]=")
        if isInteger {
          lua_rawgeti(L, i, lua_Integer(Int64(n)))
        } else {
          lua_pushnumber(L, n)
          lua_rawget(L, i)
        }
        defer { lua_settop(L, base) }
        try write(lua_gettop(L), path: "\(path)[\(isInteger ? String(Int64(n)) : "\(n)")]", depth: depth + 1)
      }
      for key in strings.sorted(by: { $0.lexicographicallyPrecedes($1) }) {
        if !first { try append(",") }
        first = false
        try append("[")
        try quote(key)
        try append("]=")
        key.withUnsafeBytes { raw in
          _ = lua_pushlstring(L, raw.baseAddress?.assumingMemoryBound(to: CChar.self), raw.count)
        }
        lua_rawget(L, i)
        defer { lua_settop(L, base) }
        try write(lua_gettop(L), path: "\(path).\(String(decoding: key, as: UTF8.self))", depth: depth + 1)
      }
      try append("}")
    default:
      throw Refused(description: "\(path) is a \(String(cString: lua_typename(L, lua_type(L, i))))")
    }
  }

  /// Bytes as a Lua string literal.
  static func quoted(_ bytes: [UInt8]) -> String {
    var writer = StableText(L: OpaquePointer(bitPattern: 1)!, limit: Int.max)
    try? writer.quote(bytes)
    return String(decoding: writer.text, as: UTF8.self)
  }

  private mutating func quote(_ bytes: some Collection<UInt8>) throws(Refused) {
    text.append(UInt8(ascii: "\""))
    for b in bytes {
      switch b {
      case UInt8(ascii: "\""), UInt8(ascii: "\\"):
        text.append(UInt8(ascii: "\\"))
        text.append(b)
      case 0x20...0x7e: text.append(b)
      default: text.append(contentsOf: "\\\(b / 100)\(b / 10 % 10)\(b % 10)".utf8)
      }
    }
    text.append(UInt8(ascii: "\""))
    if text.count > limit { throw Refused(description: "it is longer than \(limit) bytes as text") }
  }
}
