// RunLedger: the run's counts, weights and ETA, changed as operations move; a value that never calls out.

/// What the run has done so far, kept as operations are scheduled, start, retry and finish:
/// the counts behind `runProgress`, the weights the fraction and the ETA are made of, the
/// executing operations per activity label. Each count changes in one method here (the
/// scheduler's lifecycle code calls them); nothing here reaches a sink, body or handler.
struct RunLedger {
  /// When the first operation of this run was scheduled (nil: not yet).
  var runStartTime: Double?
  /// Counts behind `runProgress` (groups are not counted).
  private(set) var counts = RunProgress()
  private(set) var scheduledWeight = 0.0, finishedWeight = 0.0
  /// Weight and seconds of the finished operations that ran (what the ETA learns from).
  private(set) var ranWeight = 0.0, ranSeconds = 0.0, cancelledWeight = 0.0
  /// Executing operations per activity label.
  private(set) var activityCounts: [String: Int] = [:]
  private var eta = ETAEstimator()
  /// Scheduled operations that have not finished (groups too): the run is over when it is 0.
  var unfinishedScheduled = 0

  /// Seconds since the run started (0 before it did).
  @inline(__always)
  func elapsed(at now: Double) -> Double { runStartTime.map { now - $0 } ?? 0 }

  /// Something is scheduled: returns true if that starts the run (it starts at `now`).
  @inline(__always)
  mutating func begin(at now: Double) -> Bool {
    guard runStartTime == nil else { return false }
    runStartTime = now
    return true
  }

  /// An unfinished operation became part of the run.
  @inline(__always)
  mutating func scheduled(_ op: OperationNode) {
    unfinishedScheduled += 1
    guard !op.isGroup else { return }
    counts.pending += 1
    scheduledWeight += op.weight
  }

  /// A scheduled operation started executing (an attempt: a retry's too).
  @inline(__always)
  mutating func started(_ op: OperationNode) {
    guard !op.isGroup else { return }
    counts.pending -= 1
    counts.running += 1
  }

  /// An attempt failed and the next one waits: it counts as pending again.
  @inline(__always)
  mutating func retried(_ op: OperationNode) {
    counts.running -= 1
    counts.pending += 1
  }

  /// An operation finished: `executing` tells whether it was running (else it was pending,
  /// if scheduled), `duration` is how long it ran (nil: it never started).
  @inline(__always)
  mutating func finished(_ op: OperationNode, _ outcome: Outcome, executing: Bool, duration: Double?) {
    let counted = !op.isGroup
    if executing && counted { counts.running -= 1 }
    guard op.isScheduled else { return }
    unfinishedScheduled -= 1
    guard counted else { return }
    if !executing { counts.pending -= 1 }
    if outcome == .failed || outcome == .cancelled { counts.failed += 1 } else { counts.done += 1 }
    if outcome == .cancelled { counts.cancelled += 1; cancelledWeight += op.weight }
    finishedWeight += op.weight
    if let duration { ranWeight += op.weight; ranSeconds += duration }
  }

  /// One more (`delta` 1) or one fewer (-1) executing operation with activity `label`:
  /// returns how many there are now.
  mutating func activity(_ label: String, by delta: Int) -> Int {
    let count = (activityCounts[label] ?? 0) + delta
    activityCounts[label] = count
    return count
  }

  /// The run's progress at `now`: operations composed by weight (a running one counts for its
  /// own progress once it reports any), with an ETA from the work in flight (ETA.swift).
  /// `slots`: how many may run at once (0: no limit).
  /// `weightsAreSeconds`: the weights are typical seconds from the run store, so before
  /// anything finished a unit of weight is taken to be a second.
  mutating func progressNow(
    at now: Double, executing: [OperationNode], slots: Int, stopping: Bool, weightsAreSeconds: Bool = false
  ) -> RunProgress {
    var progress = counts
    progress.stopping = stopping
    var units = finishedWeight - cancelledWeight
    var running: [(weight: Double, seconds: Double, fraction: Double?)] = []
    var runningWeight = 0.0
    for op in executing where !op.isGroup {
      let fraction = op.hasProgress && !op.progress.isIndeterminate ? op.progress.fraction : nil
      if let fraction { units += op.weight * fraction }
      running.append((op.weight, now - (op.startTime ?? now), fraction))
      runningWeight += op.weight
    }
    progress.fraction = scheduledWeight > 0 ? min(1, units / scheduledWeight) : 0
    let slots = slots > 0 ? slots : max(1, running.count + counts.pending)
    progress.eta =
      unfinishedScheduled == 0
      ? nil
      : eta.update(
        WorkInFlight(
          elapsed: elapsed(at: now), finishedWeight: ranWeight, finishedSeconds: ranSeconds,
          pendingWeight: max(0, scheduledWeight - finishedWeight - runningWeight), running: running, slots: slots,
          secondsPerUnit: weightsAreSeconds ? 1 : nil))
    return progress
  }

  /// Counts per outcome and the failures of every finished operation in `operations`, the
  /// five longest, and `criticalPath`; `stop` says whether the run was interrupted or ended.
  func summary(
    of operations: [OperationNode], stop: StopState, criticalPath: [RunSummary.Timing],
    at now: Double
  ) -> RunSummary {
    var summary = RunSummary()
    summary.interrupted = stop.interrupts > 0
    summary.ended = stop.endedBy
    summary.elapsed = elapsed(at: now)
    summary.criticalPath = criticalPath
    // One pass: the counts and failures (in declaration order) and the five longest (longest
    // first, then declaration order), each duration read once.
    var slowest: [RunSummary.Timing] = []
    var shortestKept = -Double.infinity  // of the five kept, once there are five
    for op in operations {
      if op.isFinished, let outcome = op.outcome {
        switch outcome {
        case .succeeded:
          summary.succeeded += 1
          if let reuse = op.reuse {
            if case .upToDate = reuse { summary.upToDate += 1 } else { summary.resumed += 1 }
          }
        case .skipped: summary.skipped += 1
        case .failed, .cancelled:
          if outcome == .failed { summary.failed += 1 } else { summary.cancelled += 1 }
          summary.failures.append(
            .init(
              name: op.name, outcome: outcome, error: op.error ?? "",
              output: op.output, kind: op.errorKind,
              cause: op.errorKind == .child ? op.failedLeaf?.name : nil))
        }
      }
      guard let duration = op.duration else { continue }
      if slowest.count == 5, duration <= shortestKept { continue }
      let index = slowest.firstIndex { duration > $0.duration } ?? slowest.count
      slowest.insert(.init(name: op.name, duration: duration), at: index)
      if slowest.count > 5 { slowest.removeLast() }
      if slowest.count == 5 { shortestKept = slowest[4].duration }
    }
    summary.slowest = slowest
    return summary
  }

  /// A new run (the REPL's next `run()`): elapsed time, counts, weights and the ETA start
  /// from zero. Only when nothing scheduled is unfinished; returns whether it did.
  mutating func beginNewRun() -> Bool {
    guard unfinishedScheduled == 0 else { return false }
    let activities = activityCounts
    self = RunLedger()
    activityCounts = activities
    return true
  }
}
