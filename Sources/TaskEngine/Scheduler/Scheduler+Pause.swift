// Scheduler+Pause: an operation and its progress as one handle: cancel, pause and resume.
import Glibc

extension Scheduler {
  /// Its progress was cancelled, paused or resumed (by the script, a parent progress, or
  /// `taskrun cancel|pause|resume` from another terminal): so is the operation.
  func control(_ op: OperationNode, _ action: ProgressNode.Control) {
    switch action {
    case .cancel: cancel(op)
    case .pause: pause(op, byProgress: true)
    case .resume: resume(op, byProgress: true)
    }
  }

  /// Pauses an operation that has not finished: one that has not started does not start
  /// until resumed; a running one's commands get SIGSTOP (their process groups, here; the
  /// job's steps in a cluster), its body stops at its next yielding call, and its timeout
  /// stops counting. Its progress is paused too, unless that is what asked (`byProgress`: its
  /// walk goes on into the children itself; walking them again from here was quadratic in a
  /// deep tree).
  public func pause(_ op: OperationNode, byProgress: Bool = false) {
    guard !op.isFinished, !op.isPaused else { return }
    setPaused(op, true)
    let now = clock.now
    if op.state == .executing { holdExecution(op, at: now) }
    if !byProgress { op.progress.pause() }  // told back here: already paused; views show it paused
    announcer.changed(op, .paused, at: elapsed(at: now))
  }

  /// Resumes a paused operation: its commands get SIGCONT, its body goes on, its timeout
  /// counts what was left of it, and one that was ready may start.
  public func resume(_ op: OperationNode, byProgress: Bool = false) {
    guard op.isPaused else { return }
    setPaused(op, false)
    let now = clock.now
    if op.state == .executing { releaseExecution(op, at: now) }
    if op.state == .ready {
      // Its place among the ready: a pump that met it paused let it go.
      op.queue.ready.insert(readyEntry(op))
    }
    if op.hasProgress && !byProgress { op.progress.resume() }
    if !op.isFinished { announcer.changed(op, .resumed, at: elapsed(at: now)) }
  }

  /// Marks `op` paused or not, keeping the count of paused operations.
  func setPaused(_ op: OperationNode, _ paused: Bool) {
    guard op.isPaused != paused else { return }
    op.isPaused = paused
    stopping.pausedOperations += paused ? 1 : -1
    if !paused { stopping.toldWaiting = false }
  }

  /// Whether the run, with nothing else to do, waits for a resume (paused work, or a held
  /// run: `taskrun resume`, or Ctrl-C, comes through the inbox); says so once per wait.
  func waitsForResume() -> Bool {
    guard stopping.waitsForResume else { return false }
    if !stopping.toldWaiting {
      stopping.toldWaiting = true
      note("taskrun: paused: waiting for taskrun resume \(getpid()) (Ctrl-C ends the run)")
    }
    return true
  }

  /// A running operation stops where it is: commands stopped, timeout held, body told.
  private func holdExecution(_ op: OperationNode, at now: Double) {
    holdTimeouts(op, at: now)
    commands.signal(ownedBy: op, SIGSTOP)
    op.body?.pause(op, scheduler: self)
  }

  private func releaseExecution(_ op: OperationNode, at now: Double) {
    commands.signal(ownedBy: op, SIGCONT)
    releaseTimeouts(op, at: now)
    op.body?.resume(op, scheduler: self)
  }

  /// Changes the priority of an operation that has not started (as `queuePriority` may be
  /// changed until an operation executes); a ready one takes its new place at once.
  public func setPriority(_ op: OperationNode, _ priority: Priority) throws {
    guard op.state == .pending || op.state == .ready, !op.isFinished else {
      throw EngineError(
        .alreadyStarted,
        "cannot change the priority of '\(op.name)': it already \(op.isFinished ? "finished" : "started")")
    }
    guard priority != op.priority else { return }
    op.priority = priority
    // The old entry is passed over when it pops (its priority no longer matches).
    if op.state == .ready { op.queue.ready.insert(readyEntry(op)) }
  }
}
