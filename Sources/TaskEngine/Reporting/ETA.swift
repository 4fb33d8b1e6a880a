// ETA: the time a run has left, from the work in flight, smoothed so a steady run counts down.
import FoundationEssentials
import Glibc

/// What the estimate is made of, read off the scheduler at one moment.
public struct WorkInFlight {
  /// Seconds since the run started.
  public var elapsed: Double
  /// Weight of the finished operations (that ran), and the seconds they took.
  public var finishedWeight: Double, finishedSeconds: Double
  /// Weight of the scheduled operations that have not started.
  public var pendingWeight: Double
  /// Each running operation: its weight, how long it has run, its own progress if it reports any.
  public var running: [(weight: Double, seconds: Double, fraction: Double?)]
  /// How many operations may run at once (the main queue's limit, or the cores).
  public var slots: Int
  /// Seconds per unit of weight known before anything finished (the run store's history
  /// made the weights seconds): 1, else nil.
  public var secondsPerUnit: Double?

  public init(
    elapsed: Double, finishedWeight: Double, finishedSeconds: Double, pendingWeight: Double,
    running: [(weight: Double, seconds: Double, fraction: Double?)], slots: Int, secondsPerUnit: Double? = nil
  ) {
    (self.elapsed, self.finishedWeight, self.finishedSeconds) = (elapsed, finishedWeight, finishedSeconds)
    (self.pendingWeight, self.running, self.slots) = (pendingWeight, running, slots)
    self.secondsPerUnit = secondsPerUnit
  }
}

/// The estimate, kept from tick to tick.
///
/// - Seconds per unit of weight are learned from finished operations, or, before any
///   finished, from running ones that report their own progress (elapsed ÷ fraction).
///   Without either there is nothing to go by: the ETA is indeterminate (nil).
/// - A running operation has left: by its own progress, `seconds × (1 − f) / f`; else its
///   expected time less what it has run, and once past that, a quarter of what it has run
///   (it is late, so it will likely take a while longer).
/// - Pending work takes `weight × seconds per unit`, spread over the slots, and the run ends
///   no sooner than its longest running operation:
///   `left = max(longest running, (Σ running left + pending) / slots)`.
/// - The predicted finish time (now + left) is smoothed with a one-second time constant
///   (shorter in the first seconds, when estimates rest on little): at a steady pace it does
///   not move, so the ETA counts down instead of jumping as operations finish; in a stall it
///   rises.
public struct ETAEstimator {
  private var finish: Double?
  private var last: Double?
  /// Whether the seconds per unit came from finished operations (a first one finishing
  /// replaces a guess from running ones: smoothing starts over).
  private var learned = false
  /// Seconds over which a new prediction takes over.
  public var timeConstant = 1.0

  public init() {}

  /// Seconds left, or nil when there is nothing to go by yet (or nothing left).
  public mutating func update(_ work: WorkInFlight) -> Double? {
    guard let left = Self.estimate(work) else {
      finish = nil
      return nil
    }
    let now = work.elapsed
    let predicted = now + left
    let learnedNow = work.finishedWeight > 0 && work.finishedSeconds > 0
    if learnedNow != learned { finish = nil }
    learned = learnedNow
    if let finish, let last, now > last {
      // Early estimates rest on little: they are followed faster.
      let constant = min(timeConstant, max(0.1, 0.2 * now))
      let alpha = 1 - exp(-(now - last) / constant)
      self.finish = finish + alpha * (predicted - finish)
    } else if finish == nil {
      finish = predicted
    }
    last = now
    return max(0, (finish ?? predicted) - now)
  }

  /// The raw estimate of one moment (see the type's description).
  public static func estimate(_ work: WorkInFlight) -> Double? {
    var perUnit: Double?
    if let known = work.secondsPerUnit {
      // Weights in typical seconds: what finished only says how this run compares.
      perUnit = work.finishedWeight > 0 && work.finishedSeconds > 0 ? work.finishedSeconds / work.finishedWeight : known
    } else if work.finishedWeight > 0, work.finishedSeconds > 0 {
      perUnit = work.finishedSeconds / work.finishedWeight
    } else {
      let known = work.running.compactMap { op -> (Double, Double)? in
        guard let f = op.fraction, f > 0.01, op.weight > 0 else { return nil }
        return (op.seconds / f, op.weight)
      }
      let weight = known.reduce(0) { $0 + $1.1 }
      if weight > 0 { perUnit = known.reduce(0) { $0 + $1.0 } / weight }
    }
    guard let perUnit else { return nil }
    if work.running.isEmpty && work.pendingWeight <= 0 { return nil }
    let lefts = work.running.map { op -> Double in
      if let f = op.fraction, f > 0.01 { return max(0, op.seconds * (1 - f) / f) }
      let expected = op.weight * perUnit
      return expected > op.seconds ? expected - op.seconds : 0.25 * op.seconds
    }
    let slots = Double(max(1, work.slots))
    let spread = (lefts.reduce(0, +) + max(0, work.pendingWeight) * perUnit) / slots
    return max(lefts.max() ?? 0, spread)
  }
}
