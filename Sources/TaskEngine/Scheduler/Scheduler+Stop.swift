// Scheduler+Stop: stopping, ending and interrupting a run (the bookkeeping is StopState's).
import Glibc

extension Scheduler {
  /// Why nothing new starts any more (first failure without -k, or an interrupt), if so.
  public var stopReason: String? { stopping.stopReason }
  public var interrupts: Int { stopping.interrupts }
  /// Why the run was ended from inside (`os.exit`): like an interrupt, but not one.
  public var endedBy: String? { stopping.endedBy }
  /// Interrupted or ended: nothing new starts, not even cleanup operations.
  public var halted: Bool {
    @inline(__always) get { stopping.halted }
  }

  /// Stops new operations from starting: scheduled ones that have not started are cancelled,
  /// except cleanup operations (`when = failed | finished`), which still run unless interrupted.
  public func stop(because reason: String) {
    stopping.stop(because: reason)
    // Operations downstream of a failure are left to be skipped when it reaches them.
    // By id, not in a Set: after a failure at the head of a chain of 1,000,000 that set hashed
    // every operation of it.
    var downstream = [Bool](repeating: false, count: halted ? 0 : operations.count + 1)
    if !halted {
      var stack = operations.filter { $0.outcome == .failed }.flatMap(\.dependents)
      while let op = stack.popLast() {
        guard !downstream[op.id] else { continue }
        downstream[op.id] = true
        stack.append(contentsOf: op.dependents)
      }
    }
    // An interrupt also ends operations waiting for their next attempt.
    for op in operations
    where op.isScheduled && !op.isFinished && op.state != .executing
      && (halted || (!op.hasStarted && op.policy == .succeeded && !downstream[op.id]))
    {
      completely { cancel(op, reason: reason) }  // its dependents skipped before they are reached
    }
  }

  /// A new run (a `run()` from a script) starts fresh after an earlier run's failure; an
  /// interrupt or `os.exit` stays in force.
  public func clearStop() {
    stopping.clear()
  }

  /// An interactive session survives Ctrl-C: once everything interrupted has finished, new
  /// work may start again.
  public func endInterrupt() {
    stopping.endInterrupt(signalsPosted: inbox.signalsPosted.load(ordering: .sequentiallyConsistent))
    inbox.signalsHandled.store(stopping.signalsHandled, ordering: .sequentiallyConsistent)
  }

  /// Handles the interrupts the signal watcher counted since the last look. Called wherever
  /// something could start (evaluate, pump, a retry's next attempt), so that nothing starts
  /// after a Ctrl-C even while the loop has not drained the inbox (a CPU-bound body).
  public func absorbSignals() {
    let posted = inbox.signalsPosted.load(ordering: .sequentiallyConsistent)
    while let handled = stopping.nextSignal(posted: posted) {
      inbox.signalsHandled.store(handled, ordering: .sequentiallyConsistent)
      interrupt()
    }
  }

  /// Ends the run now, as `os.exit` asks: every operation that has not finished is cancelled
  /// with `reason` (running commands get SIGTERM, then SIGKILL after the grace).
  public func end(because reason: String) {
    guard stopping.end(because: reason) else { return }
    stopping.held = false  // a paused run ends too
    stop(because: reason)
    for op in operations where op.state == .executing { completely { cancel(op, reason: reason) } }
    onHalt()
  }

  /// Ctrl-C / SIGTERM: the first cancels everything; later ones also kill every command.
  public func interrupt() {
    let interrupts = stopping.interrupted()
    stopping.held = false  // Ctrl-C ends a paused run too
    if interrupts == 1 {
      if !executing.isEmpty { note("taskrun: stopping…; Ctrl-C again to kill") }
      stop(because: "interrupted")
      let now = clock.now
      announcer.runProgress(progressNow(at: now), at: elapsed(at: now))  // "stopping…" shows at once
      for op in operations where op.state == .executing {
        guard let grace = op.backgroundGrace else {
          completely { cancel(op, reason: "interrupted") }
          continue
        }
        note("taskrun: waiting up to \(formatSeconds(grace)) for '\(op.name)' to finish (Ctrl-C again to stop it)")
        after(grace) { [unowned self, unowned op] in
          cancel(op, reason: "interrupted: its background grace of \(formatSeconds(grace)) ran out")
        }
      }
      onHalt()
    } else {
      if interrupts == 2, !executing.isEmpty { note("taskrun: killing…; Ctrl-C again to exit at once") }
      for op in operations where op.state == .executing { completely { cancel(op, reason: "interrupted") } }
      stopCleanups(reason: "interrupted")
      processes.signalAll(SIGKILL)
      if killsStrays { processes.killStrays() }
    }
  }
}
