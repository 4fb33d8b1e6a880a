// LuaPattern: checks a Lua pattern without matching it, so a bad one is an error where it is given.
//
// Lua finds most errors in a pattern only while matching, and only in the part a subject
// reaches: `string.match("", "a%")` is nil, `string.match("a", "a%")` raises. A pattern that
// runs against output later (`operation { progress = … }`) is checked here instead, by the
// rules and with the messages of Lua 5.4's lstrlib.c (`do_match`, `classEnd`, `check_capture`,
// `matchbalance`).

/// What a well-formed pattern holds.
struct LuaPattern {
  /// How many captures a match returns (position captures `()` included).
  let captures: Int

  /// lstrlib's LUA_MAXCAPTURES.
  static let maxCaptures = 32
  /// Each capture bracket and each repeated item (`?`, `*`, `+`, `-`) nests one call of
  /// lstrlib's `match`, which raises "pattern too complex" 200 calls deep (MAXCCALLS); below
  /// this many the error cannot happen, whatever the subject.
  static let maxNesting = 190

  /// Checks `pattern`; throws the message Lua would raise when a match reached the fault.
  init(_ pattern: String) throws {
    let p = Array(pattern.utf8)
    var i = 0
    var open: [Bool] = []  // per capture: still open
    var nesting = 0
    if p.first == UInt8(ascii: "^") { i = 1 }  // an anchor only at the start
    func byte(_ k: Int) -> UInt8? { k < p.count ? p[k] : nil }
    /// The end of the single-character class at `k` (lstrlib's classEnd).
    func classEnd(_ k: Int) throws -> Int {
      var k = k
      let c = p[k]
      k += 1
      if c == UInt8(ascii: "%") {
        guard k < p.count else { throw ScriptError("malformed pattern (ends with '%')") }
        return k + 1
      }
      guard c == UInt8(ascii: "[") else { return k }
      if byte(k) == UInt8(ascii: "^") { k += 1 }
      repeat {  // the first character is part of the set, even a ']'
        guard k < p.count else { throw ScriptError("malformed pattern (missing ']')") }
        let c = p[k]
        k += 1
        if c == UInt8(ascii: "%") && k < p.count { k += 1 }
      } while byte(k) != UInt8(ascii: "]")
      return k + 1
    }
    while i < p.count {
      switch p[i] {
      case UInt8(ascii: "("):
        guard open.count < Self.maxCaptures else { throw ScriptError("too many captures") }
        if byte(i + 1) == UInt8(ascii: ")") {
          open.append(false)  // a position capture
          i += 2
        } else {
          open.append(true)
          i += 1
        }
        nesting += 1
        continue
      case UInt8(ascii: ")"):
        guard let last = open.lastIndex(of: true) else { throw ScriptError("invalid pattern capture") }
        open[last] = false
        nesting += 1
        i += 1
        continue
      case UInt8(ascii: "$") where i + 1 == p.count:
        i += 1
        continue
      case UInt8(ascii: "%"):
        switch byte(i + 1) {
        case UInt8(ascii: "b"):
          guard i + 3 < p.count else { throw ScriptError("malformed pattern (missing arguments to '%b')") }
          i += 4
          continue
        case UInt8(ascii: "f"):
          guard byte(i + 2) == UInt8(ascii: "[") else { throw ScriptError("missing '[' after '%f' in pattern") }
          i = try classEnd(i + 2)
          continue
        case let d? where (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(d):
          let l = Int(d) - Int(UInt8(ascii: "1"))
          guard l >= 0, l < open.count, !open[l] else { throw ScriptError("invalid capture index %\(l + 1)") }
          i += 2
          continue
        default:
          break
        }
      default:
        break
      }
      // A single-character class, maybe repeated.
      let end = try classEnd(i)
      if let q = byte(end), "?*+-".utf8.contains(q) {
        nesting += 1
        i = end + 1
      } else {
        i = end
      }
    }
    guard !open.contains(true) else { throw ScriptError("unfinished capture") }
    guard nesting <= Self.maxNesting else {
      throw ScriptError("pattern too complex (more than \(Self.maxNesting) captures and repeated items)")
    }
    captures = open.count
  }
}
