// Scheduler+Reporting: the scheduler's face to reporters: sinks, time, progress, summary, ticks.

extension Scheduler {
  /// The reporters. Setting them first tells the old ones the successes they held.
  public var sinks: [any EventSink] {
    get { announcer.sinks }
    set { setSinks(newValue) }
  }

  /// Replaces the reporters (the successes held go to the old ones first).
  public func setSinks(_ sinks: [any EventSink]) {
    announcer.setSinks(sinks, at: elapsed)
  }

  /// What the sinks read, together.
  @inline(__always)
  var interests: EventInterests { announcer.interests }

  /// Seconds between `tick` and `runProgress` events (nil: none; the live view sets ~1/15 s).
  public var tickInterval: Double? {
    get { announcer.tickInterval }
    set { announcer.tickInterval = newValue }
  }

  /// When the next tick is due (clock time), if ticks are wanted.
  var nextTick: Double? { announcer.nextTickDeadline }

  /// When the run started (clock time; nil: nothing scheduled yet).
  public var runStartTime: Double? { ledger.runStartTime }

  /// Scheduled operations that have not finished: the run is over when it is 0.
  public var unfinishedScheduled: Int {
    @inline(__always) get { ledger.unfinishedScheduled }
  }

  /// Executing operations per activity label.
  public var activityCounts: [String: Int] { ledger.activityCounts }

  /// Seconds since the run started.
  public var elapsed: Double { elapsed(at: clock.now) }
  /// The ledger's field itself: a call of a ledger method here would copy the whole ledger
  /// (its dictionary and the ETA's arrays retained and released at every start and finish).
  @inline(__always)
  func elapsed(at now: Double) -> Double {
    guard let start = ledger.runStartTime else { return 0 }
    return now - start
  }

  /// Tells the sinks `event` (for hosts: the engine's own events come from the announcer).
  public func emit(_ event: RunEvent) {
    announcer.emit(event, at: elapsed)
  }

  /// The successes held since the last event, told now.
  func emitHeldSuccesses() {
    announcer.flushHeld(at: elapsed)
  }

  /// Adds output text to an operation's record and the event stream.
  public func record(output text: String, stream: OutputChannel, for op: OperationNode) {
    op.keepOutput(text)  // the report needs the tail: what is kept per operation is bounded
    op.outputObserver?(text)
    announcer.output(text, stream: stream, of: op, at: elapsed)
  }

  func countActivity(_ label: String, by delta: Int) {
    let count = ledger.activity(label, by: delta)
    announcer.activity(label, count: count, at: elapsed)
  }

  /// A line the script printed: to the reporters, or to stdout when there are none.
  public func message(_ text: String, from op: OperationNode?) {
    announcer.message(text, from: op, at: elapsed)
  }

  /// taskrun's own note about the run ("taskrun: stopping…"): on standard error, as its others.
  func note(_ text: String) {
    announcer.message(text, from: nil, note: true, at: elapsed)
  }

  /// Counts per outcome and the failures of every scheduled operation.
  public var summary: RunSummary {
    ledger.summary(of: operations, stop: stopping, criticalPath: criticalPath(), at: clock.now)
  }

  /// The run's progress now: operations composed by weight, with an ETA (RunLedger); no ETA
  /// while the run is paused (held, or everything that executes is paused): it would only grow.
  func progressNow(at now: Double) -> RunProgress {
    var progress = ledger.progressNow(
      at: now, executing: executing, slots: mainQueue.maxConcurrent, stopping: stopping.interrupts > 0,
      weightsAreSeconds: memory?.history != nil)
    if stopping.waitsForResume && (stopping.held || executing.allSatisfy { $0.isPaused || $0.isGroup }) {
      progress.eta = nil
    }
    return progress
  }

  /// Emits `runProgress` and `tick` when the tick interval has passed.
  func tickIfDue() {
    guard announcer.tickInterval != nil, let runStart = ledger.runStartTime else { return }
    let now = clock.now
    guard announcer.tickDue(at: now) else { return }
    let progress = progressNow(at: now)
    announcer.tick(at: now - runStart, runStart: runStart, executing: executing, progress: progress)
  }

  /// Starts counting a new run (the REPL's next `run()`): elapsed time, counts, weights and
  /// the ETA start from zero and `run_start` is emitted again when something is scheduled.
  /// Only when nothing scheduled is unfinished.
  public func beginNewRun() {
    guard ledger.beginNewRun() else { return }
    announcer.beginNewRun()
  }

  /// Emits the final `runProgress` and `run_finish` with the summary; call once, at the end.
  @discardableResult
  public func finishRun() -> RunSummary {
    let summary = self.summary
    let now = clock.now
    announcer.runFinished(summary, progress: progressNow(at: now), at: elapsed(at: now))
    return summary
  }
}
