// StopState: why nothing new starts (a failure, an interrupt, `os.exit`); a value that never calls out.

/// The run's stop bookkeeping: the first reason nothing new starts, how many interrupts came,
/// why the run was ended from inside, and how many of the inbox's signals were handled. The
/// scheduler's stop, end and interrupt methods (Scheduler+Stop.swift) change it here and do the
/// cancelling, messages and call-outs themselves.
struct StopState {
  /// Why nothing new starts any more (first failure without -k, or an interrupt), if so.
  private(set) var stopReason: String?
  /// The failure that stopped the run (fail-fast), when one did: what the operations the
  /// stop cancelled were cancelled because of (`Scheduler.cause(of:)`).
  private(set) var stoppedBy: OperationNode?
  private(set) var interrupts = 0
  /// Why the run was ended from inside (`os.exit`): like an interrupt, but not one.
  private(set) var endedBy: String?
  /// Interrupts of the inbox's count already handled (see `Scheduler.absorbSignals`).
  private(set) var signalsHandled = 0

  /// Paused as a whole (`taskrun pause RUN`): nothing new starts until it is resumed.
  var held = false
  /// Operations paused and not finished: while there are any (or the run is held), a run
  /// with nothing else to do waits to be resumed instead of ending.
  var pausedOperations = 0
  /// The wait for a resume was said (once per wait).
  var toldWaiting = false

  var waitsForResume: Bool { held || pausedOperations > 0 }

  /// Interrupted or ended: nothing new starts, not even cleanup operations.
  @inline(__always)
  var halted: Bool { interrupts > 0 || endedBy != nil }

  /// The fail-fast rule: without -k (`keepGoing`), the first failure stops the run.
  @inline(__always)
  func stopsAfter(_ op: OperationNode, keepGoing: Bool) -> Bool {
    op.outcome == .failed && !keepGoing && stopReason == nil
  }

  /// Why the operations that did not start were cancelled after `op` failed.
  static func failFastReason(_ op: OperationNode) -> String {
    "not started: the run stopped after '\(op.name)' failed (-k keeps going)"
  }

  /// The first reason given is kept.
  mutating func stop(because reason: String) {
    stopReason = stopReason ?? reason
  }

  /// The fail-fast stop after `op` failed (the first reason given is kept, and its failure).
  mutating func stop(after op: OperationNode) {
    if stopReason == nil { stoppedBy = op }
    stop(because: Self.failFastReason(op))
  }

  /// A new run starts fresh after an earlier run's failure; an interrupt or `os.exit` stays.
  mutating func clear() {
    if !halted { (stopReason, stoppedBy) = (nil, nil) }
  }

  /// The interrupt is over (an interactive session goes on); the signals up to `posted` count
  /// as handled.
  mutating func endInterrupt(signalsPosted posted: Int) {
    interrupts = 0
    (stopReason, stoppedBy) = (nil, nil)
    signalsHandled = posted
  }

  /// Takes the next of the `posted` signals not yet handled: returns its number (the new
  /// handled count), or nil when every one is.
  @inline(__always)
  mutating func nextSignal(posted: Int) -> Int? {
    guard signalsHandled < posted else { return nil }
    signalsHandled += 1
    return signalsHandled
  }

  /// `os.exit`: returns false if the run was already ended (the first reason stays).
  mutating func end(because reason: String) -> Bool {
    guard endedBy == nil else { return false }
    endedBy = reason
    stopReason = reason
    return true
  }

  /// One more interrupt: returns how many there were (the first sets the stop reason).
  mutating func interrupted() -> Int {
    interrupts += 1
    if interrupts == 1 { stopReason = "interrupted" }
    return interrupts
  }
}
