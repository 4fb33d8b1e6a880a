// Numbers from Lua: the one place where NaN, infinities and whole numbers out of range are
// refused, with one wording for each (as lauxlib's luaL_check* are for Lua's own functions).
import CLua
import TaskEngine

/// The checks every number from Lua goes through, whatever it sets: a field of a spec, a
/// progress count, a word of a command. Messages read `WHAT must be …  (got VALUE)`, `WHAT`
/// naming the field (`progress: field 'total'`, `operation 'a': field 'sh': argv element #2`).
enum LuaNumber {
  /// Whole numbers are taken from -2^53 to 2^53: every one of them is exact as a Lua float,
  /// and as a count it fits an Int64 (progress counts, sums of pending units) with room to add.
  static let wholeLimit: Double = 9_007_199_254_740_992
  static let wholeRange = "from -2^53 to 2^53"

  /// `value` unless it is NaN or ±inf.
  static func finite(_ value: Double, _ what: @autoclosure () -> String) throws -> Double {
    guard value.isFinite else { throw ScriptError("\(what()) must be a finite number (got \(formatNumber(value)))") }
    return value
  }

  /// `value` as an Int64 if it is a whole number from -2^53 to 2^53 (negative zero is 0).
  static func whole(_ value: Double, _ what: @autoclosure () -> String) throws -> Int64 {
    _ = try finite(value, what())
    guard value == value.rounded(), abs(value) <= wholeLimit else {
      throw ScriptError("\(what()) must be a whole number \(wholeRange) (got \(formatNumber(value)))")
    }
    return Int64(value)
  }

  /// A non-negative finite number (rates, estimates).
  static func nonNegative(_ value: Double, _ what: @autoclosure () -> String) throws -> Double {
    guard try finite(value, what()) >= 0 else {
      throw ScriptError("\(what()) must be 0 or more (got \(formatNumber(value)))")
    }
    return value
  }
}

/// Every range error of a field or an argument says what it got: the number (as `tostring`
/// writes it), or `nil` for a field that must be given.
extension ScriptHost {
  /// A whole number from `range` (counts: retries, attempts, limits); nil (a field that must
  /// be given) is refused as out of range.
  func count(_ value: Double?, _ field: String, _ range: ClosedRange<Int>, in what: String) throws -> Int {
    guard let value, value == value.rounded(), value >= Double(range.lowerBound), value <= Double(range.upperBound)
    else {
      throw ScriptError(
        "\(what): field '\(field)' must be a whole number from \(range.lowerBound) to \(range.upperBound) (got \(value.map(formatNumber) ?? "nil"))"
      )
    }
    return Int(value)
  }

  /// A number from `range` (an operation's weight).
  func number(_ value: Double, _ field: String, _ range: ClosedRange<Double>, in what: String) throws -> Double {
    guard range.contains(value) else {
      throw ScriptError(
        "\(what): field '\(field)' must be from \(formatNumber(range.lowerBound)) to \(formatNumber(range.upperBound)) (got \(formatNumber(value)))"
      )
    }
    return value
  }

  /// Seconds more than 0, with no upper end (an operation's timeout: beyond Limits.maxSeconds, none).
  func positiveSeconds(_ value: Double, _ field: String, in what: String) throws -> Double {
    guard value > 0 else {
      throw ScriptError("\(what): field '\(field)' must be a positive number of seconds (got \(formatNumber(value)))")
    }
    return value
  }

  /// A queue's `max_concurrent`: a whole number from 0 to Limits.maxCount, or -1 for unlimited.
  func concurrency(_ value: Double, _ what: String) throws -> Int {
    guard value == value.rounded(), value >= -1, value <= Double(Limits.maxCount) else {
      throw ScriptError(
        "\(what): max_concurrent must be a whole number from 0 to \(Limits.maxCount), or -1 for unlimited (got \(formatNumber(value)))"
      )
    }
    return Int(value)
  }

  /// Argument `i` as a message shows what a function got: a number as `tostring` writes it
  /// (`nan`, `inf` too), anything else by its type.
  func describeArgument(_ s: LuaStack, _ i: Int32) -> String {
    if s.type(i) == LUA_TNUMBER, let value = s.number(i), !value.isFinite { return formatNumber(value) }
    if s.type(i) == LUA_TNUMBER, let n = s.stringOrNumber(i) { return n }
    return s.typeName(i)
  }

  /// Argument `n` of `function` is not a number in its range: "bad argument #1 to 'timeout'
  /// (positive number of seconds expected, got -1)".
  func badNumberArgument(_ s: LuaStack, _ n: Int32, _ function: String, _ expected: String) -> ScriptError {
    .badArgument(Int(n), to: function, expected: expected, got: describeArgument(s, n))
  }

  /// Seconds to wait, from 0 (or more than 0) to Limits.maxSeconds.
  func seconds(_ value: Double, _ field: String, positive: Bool = false, in what: String) throws -> Double {
    guard positive ? value > 0 : value >= 0, value <= Limits.maxSeconds else {
      throw ScriptError(
        "\(what): field '\(field)' must be \(positive ? "more than 0" : "from 0") to \(formatNumber(Limits.maxSeconds)) seconds (got \(formatNumber(value)))"
      )
    }
    return value
  }
}

extension LuaStack {
  /// A word of a command or an environment value: a string as it is, or a finite number
  /// written as `tostring` writes it; nil for any other type. NaN and ±inf are errors: `-nan`
  /// or `inf` handed to a program is never what a script meant.
  func commandWord(_ i: Int32, _ what: @autoclosure () -> String) throws -> String? {
    if let text = string(i) { return text }
    guard let value = number(i) else { return nil }
    _ = try LuaNumber.finite(value, what())
    return stringOrNumber(i)
  }
}
