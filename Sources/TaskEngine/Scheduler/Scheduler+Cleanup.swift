// Scheduler+Cleanup: the bounded window an operation's cleanup gets after its body stopped.

extension Scheduler {
  /// `op`'s body stopped for a failure, a cancel or a timeout: its cleanup runs (once per
  /// attempt) while it still holds its slot and resources, then it finishes `outcome` (or is
  /// tried again) as it would have. The cleanup gets `cleanup.grace` seconds; then, or at a
  /// second Ctrl-C, it is stopped (`stopCleanups`) and the operation finishes all the same.
  func cleanUp(_ op: OperationNode, _ outcome: Outcome, error: String?, traceback: String?, kind: FailureKind?) {
    guard let cleanup = op.cleanup else { return }
    op.cleanedUp = true
    stopTimeouts(op)  // its time is over: the cleanup has its own
    let why: FailureKind =
      op.timedOut
      ? .timeout
      : outcome == .cancelled ? (stopping.interrupts > 0 ? .interrupted : .cancelled) : kind ?? .script
    var ended = false
    let grace = cleanup.grace
    let timer = after(grace) { [unowned self, unowned op] in
      guard !ended else { return }
      note("taskrun: the cleanup of '\(op.name)' ran out of its \(formatSeconds(grace)) and was stopped")
      cleanup.stop(op, scheduler: self, reason: "cleanup stopped: it ran out of its \(formatSeconds(grace))")
    }
    cleanup.run(op, why: why, message: error ?? op.error ?? why.rawValue, scheduler: self) {
      [unowned self, unowned op] in
      guard !ended else { return }
      ended = true
      cancelTimer(timer)
      finish(op, outcome, error: error, traceback: traceback, kind: kind)
    }
  }

  /// Stops every cleanup that is running (a second Ctrl-C).
  func stopCleanups(reason: String) {
    for op in executing where op.cleanedUp {
      op.cleanup?.stop(op, scheduler: self, reason: reason)
    }
  }
}
