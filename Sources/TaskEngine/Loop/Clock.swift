// Clock: where the scheduler reads time, so tests can drive timeouts and sleeps without sleeping.
import FoundationEssentials
import Glibc

/// A source of monotonic time in seconds. The scheduler reads time only through this.
public protocol SchedulerClock: AnyObject {
  /// Seconds since an arbitrary fixed origin.
  var now: Double { get }
  /// Called when the scheduler has nothing to do but wait for `deadline` (or `nil`: no timer).
  /// Returns after the inbox got something or the deadline passed.
  func idle(until deadline: Double?, inbox: Inbox)
}

/// Real time (CLOCK_MONOTONIC); idling blocks on the inbox.
public final class MonotonicClock: SchedulerClock {
  public init() {}
  public var now: Double { Self.seconds() }
  /// CLOCK_MONOTONIC in seconds, for threads other than the scheduler's.
  public static func seconds() -> Double {
    var ts = timespec()
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return Double(ts.tv_sec) + Double(ts.tv_nsec) * 1e-9
  }
  public func idle(until deadline: Double?, inbox: Inbox) {
    inbox.waitForItems(timeout: deadline.map { max(0, $0 - now) })
  }
}

/// Virtual time for tests: when only timers are pending, time jumps to the next one at once.
public final class ManualClock: SchedulerClock {
  public private(set) var now: Double
  public init(now: Double = 0) { self.now = now }
  /// Moves time forward by `seconds`.
  public func advance(by seconds: Double) { now += seconds }
  public func idle(until deadline: Double?, inbox: Inbox) {
    if let deadline, inbox.isEmpty {
      now = max(now, deadline)
    } else {
      inbox.waitForItems(timeout: nil)
    }
  }
}
