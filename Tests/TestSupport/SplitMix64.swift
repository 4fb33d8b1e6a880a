// SplitMix64: the seeded random numbers of the randomized tests, shared by their targets.
import Glibc

/// Small, fast, and the same sequence for the same seed everywhere.
public struct SplitMix64: RandomNumberGenerator {
  public var state: UInt64
  public init(state: UInt64) { self.state = state }
  public mutating func next() -> UInt64 {
    state &+= 0x9E37_79B9_7F4A_7C15
    var z = state
    z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
    z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
    return z ^ (z >> 31)
  }
  public mutating func int(_ range: ClosedRange<Int>) -> Int {
    range.lowerBound + Int(next() % UInt64(range.count))
  }
  public mutating func chance(_ p: Double) -> Bool { Double(next() % 1_000_000) / 1_000_000 < p }
  public mutating func pick<T>(_ items: [T]) -> T { items[int(0...items.count - 1)] }
}

extension SplitMix64 {
  /// A generator for a randomized test: seeded from the environment variable `variable` when
  /// it is set (to replay a run), else at random; the seed is printed either way.
  public static func seeded(by variable: String, for test: String) -> SplitMix64 {
    let seed = getenv(variable).flatMap { UInt64(String(cString: $0)) } ?? UInt64.random(in: 0...UInt64.max)
    print("\(test) seed: \(seed) (\(variable)=\(seed) repeats it)")
    return SplitMix64(state: seed)
  }
}
