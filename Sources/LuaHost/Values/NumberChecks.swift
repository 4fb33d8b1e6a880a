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

extension ScriptHost {
  /// A whole number from `range` (counts: retries, attempts, limits).
  func count(_ value: Double, _ field: String, _ range: ClosedRange<Int>, in what: String) throws -> Int {
    guard value == value.rounded(), value >= Double(range.lowerBound), value <= Double(range.upperBound) else {
      throw ScriptError(
        "\(what): field '\(field)' must be a whole number from \(range.lowerBound) to \(range.upperBound) (got \(formatNumber(value)))"
      )
    }
    return Int(value)
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
