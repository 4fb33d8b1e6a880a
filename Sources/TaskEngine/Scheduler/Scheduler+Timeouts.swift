// Scheduler+Timeouts: an attempt's timeouts (one fails it, one cancels it): armed at its start, held while paused, stopped at its end.

extension Scheduler {
  /// Arms the timeouts of the attempt starting now: `timeout` (it fails, and may be tried
  /// again) and `timeout(s, { cancel = true })` (it is cancelled).
  func armTimeouts(_ op: OperationNode, at now: Double) {
    if let seconds = op.timeout { arm(op, cancels: false, seconds: seconds, at: now) }
    if let seconds = op.cancelTimeout { arm(op, cancels: true, seconds: seconds, at: now) }
  }

  /// The attempt ended (or its cleanup begins): no timeout of it fires any more. Most
  /// operations have none: nothing is looked up but the extras' presence.
  func stopTimeouts(_ op: OperationNode) {
    guard let extras = op.extrasStorage else { return }
    cancelTimer(extras.failTimer.timer)
    cancelTimer(extras.cancelTimer.timer)
    (extras.failTimer, extras.cancelTimer) = (AttemptTimer(), AttemptTimer())
  }

  /// Paused: the timeouts stop, keeping what was left of them.
  func holdTimeouts(_ op: OperationNode, at now: Double) {
    guard let extras = op.extrasStorage else { return }
    for cancels in [false, true] {
      var t = cancels ? extras.cancelTimer : extras.failTimer
      guard let timer = t.timer else { continue }
      cancelTimer(timer)
      (t.timer, t.left) = (nil, max(0, t.deadline - now))
      if cancels { extras.cancelTimer = t } else { extras.failTimer = t }
    }
  }

  /// Resumed: the timeouts go on with what was left of them.
  func releaseTimeouts(_ op: OperationNode, at now: Double) {
    guard let extras = op.extrasStorage else { return }
    if let left = extras.failTimer.left { arm(op, cancels: false, seconds: left, at: now) }
    if let left = extras.cancelTimer.left { arm(op, cancels: true, seconds: left, at: now) }
  }

  private func arm(_ op: OperationNode, cancels: Bool, seconds: Double, at now: Double) {
    let attempt = op.attempt
    let timer = after(seconds) { [weak self, weak op] in
      guard let self, let op, op.attempt == attempt else { return }
      if cancels { expireByCancel(op) } else { expire(op) }
    }
    let armed = AttemptTimer(timer: timer, deadline: now + seconds, left: nil)
    if cancels { op.extras.cancelTimer = armed } else { op.extras.failTimer = armed }
  }

  /// Its timeout passed: cancel it, and it finishes `failed` with a timeout error (and is
  /// tried again if retries remain).
  public func expire(_ op: OperationNode) {
    guard op.state == .executing, !op.timedOut else { return }
    op.timedOut = true
    op.isCancelled = false  // a timeout overrides an earlier cancel's reason
    cancel(op, reason: "timed out after \(formatSeconds(op.timeout ?? 0))")
  }

  /// Its `timeout(s, { cancel = true })` passed: it is cancelled, as the talk's timeout
  /// observer does, and not tried again.
  func expireByCancel(_ op: OperationNode) {
    guard op.state == .executing, !op.timedOut else { return }
    cancel(op, reason: "timed out after \(formatSeconds(op.cancelTimeout ?? 0))")
  }
}
