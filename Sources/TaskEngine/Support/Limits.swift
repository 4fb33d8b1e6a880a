// Limits: the ranges of the numbers that reach the engine, and conversions that cannot trap.

/// Every duration and count the engine takes has a defined range (documented in the README).
public enum Limits {
  /// The longest wait taskrun tells apart from "never": about 31.7 years. A longer timeout
  /// means none; a longer sleep sleeps until cancelled.
  public static let maxSeconds = 1e9
  /// Retries, attempts and concurrency limits.
  public static let maxCount = 1_000_000
  /// An operation's weight in the run's progress.
  public static let maxWeight = 1e9

  /// `seconds` as the engine waits it: NaN and anything above `maxSeconds` (and +∞) become
  /// `maxSeconds`, negatives 0.
  public static func wait(_ seconds: Double) -> Double {
    guard seconds == seconds else { return maxSeconds }
    return min(max(0, seconds), maxSeconds)
  }
}

extension Int64 {
  /// `value` rounded toward zero, saturating at the ends of Int64 (NaN is 0): for numbers
  /// read from a command's output (a 21-digit hash or timestamp).
  public init(saturating value: Double) {
    if value != value {
      self = 0
    } else if value >= 9.2e18 {
      self = .max
    } else if value <= -9.2e18 {
      self = .min
    } else {
      self = Int64(value)
    }
  }
}

/// A number as a message shows it: 5, 2.5, 1e+300, nan, inf.
public func formatNumber(_ x: Double) -> String {
  if x.isNaN { return "nan" }
  if x.isInfinite { return x > 0 ? "inf" : "-inf" }
  if x == x.rounded() && abs(x) < 1e15 { return String(Int64(x)) }
  return "\(x)"
}
