// Scheduler+Lifecycle: an operation's way through the run (evaluate, ready, start, finish, retry, cancel).
import Glibc

extension Scheduler {
  /// Called when every dependency of a scheduled operation finished: skip, cancel or ready it.
  func evaluate(_ op: OperationNode) {
    absorbSignals()
    guard op.state == .pending, !op.isFinished else { return }
    if stopping.halted, let stopReason = stopping.stopReason { return finish(op, .cancelled, error: stopReason) }
    let dependencies = op.producedBy.isEmpty ? op.dependencies : op.dependencies.filter { op.producedBy[$0] == nil }
    switch op.policy {
    case .succeeded:
      let (bad, upstream) = Self.mostTelling(dependencies)
      if let bad {
        op.upstreamFailed = upstream
        return finish(op, .skipped, error: "dependency '\(bad.name)' \(bad.outcome?.rawValue ?? "did not succeed")")
      }
      if failConditionDependency(op) { return }
      if let stopReason = stopping.stopReason { return finish(op, .cancelled, error: stopReason) }
    case .failed:
      if !dependencies.contains(where: { $0.outcome == .failed || $0.outcome == .cancelled || $0.upstreamFailed }) {
        return finish(op, .skipped, error: "no dependency failed")
      }
      if let stopReason = stopping.stopReason, stopping.halted { return finish(op, .cancelled, error: stopReason) }
    case .finished:
      break
    }
    if !op.conditions.isEmpty && !op.conditionsHeld { return checkConditions(op) }
    makeReady(op)
  }

  func makeReady(_ op: OperationNode) {
    if let memory {
      if op.attempt == 0, !op.isGroup, op.freshness != nil || memory.resumed != nil {
        let verdict = memory.check(op)  // may call the script's fresh(), which may end the run
        if op.isFinished || op.state != .pending { return }
        if stopping.halted, let reason = stopping.stopReason { return finish(op, .cancelled, error: reason) }
        if case .reuse = verdict, op.body?.mayBeReused(op) ?? true { return finishUnrun(op) }  // Scheduler+Memory
        op.reuse = nil
      }
      memory.ready(op, at: clock.now)
    }
    noteReady(op)
    op.state = .ready
    op.queue.ready.insert(readyEntry(op))
    announcer.ready(op, at: elapsed(at: clock.now))
  }

  /// Its place among the ready: priority, then (with history) the longest path to the end
  /// in typical seconds, then declaration order.
  @inline(__always)
  func readyEntry(_ op: OperationNode, rank: Double? = nil) -> ReadyEntry {
    ReadyEntry(priority: op.priority.rawValue, rank: rank ?? memory?.history?.rank(op) ?? 0, id: op.id, operation: op)
  }

  /// Starts ready operations while their queues have room. Returns whether any started.
  @discardableResult
  public func pump() -> Bool {
    absorbSignals()
    if stopping.held { return false }
    if terminal.declared > 0, let started = pumpForTerminal() { return started }
    var started = false
    if !admission.parked.isEmpty {
      // Waiting for resources: first come, first served.
      var still: [OperationNode] = []
      for op in admission.parked where op.state == .ready {
        if op.isPaused {
          still.append(op)
          continue
        }
        if terminal.declared > 0 && terminal.waiting == nil && waitsForTheTerminal(op) { continue }
        // One started just now with the terminal: it runs alone.
        if terminal.waiting != nil || terminalHeld || !(op.queue.hasCapacity && acquire(op)) {
          still.append(op)
        } else {
          start(op)
          started = true
        }
      }
      admission.parked = still
    }
    for queue in queues {
      // Bodies that waited come back first: they started before anything still ready.
      while queue.hasCapacity && !queue.reclaimers.isEmpty {
        let (op, resume) = queue.reclaimers.removeFirst()
        guard op.slotYielded, op.state == .executing else { continue }
        op.slotYielded = false
        queue.running += 1
        resume()
        started = true
      }
      while queue.hasCapacity, let entry = queue.ready.popMax() {
        let op = entry.operation
        if terminalHeld {  // one started just now with the terminal: it runs alone
          queue.ready.insert(entry)
          return started
        }
        // A paused one goes back in when resumed; one whose priority changed is in again
        // under its new priority.
        guard op.state == .ready, !op.isPaused, entry.priority == op.priority.rawValue else { continue }
        if terminal.declared > 0 && (terminal.waiting != nil || waitsForTheTerminal(op)) {
          if terminal.waiting !== op { queue.ready.insert(entry) }  // it waits behind the one that waits
          return started
        }
        guard acquire(op) else {
          admission.park(op)
          continue
        }
        start(op)
        started = true
      }
      if !queue.hasCapacity && !queue.ready.isEmpty { queue.blockedSequence = admission.readySequence }
    }
    return started
  }

  func start(_ op: OperationNode) {
    op.state = .executing
    if op.attempt == 0 { recordStartCause(of: op) }
    if op.extrasStorage?.isRemote == true { (op.remoteState, op.remoteStartTime) = (nil, nil) }  // a retry: a new job
    op.attempt += 1
    let now = clock.now
    op.startTime = now
    if !op.isGroup { op.queue.running += 1 }
    ledger.started(op)
    op.executingIndex = executing.count
    executing.append(op)
    announcer.started(op, at: elapsed(at: now))
    if terminal.declared > 0 && op.interactive { takeTerminal(op, at: elapsed(at: now)) }
    // Most operations have no activities, observers or handlers: not even an empty loop.
    if !op.activities.isEmpty { for label in op.activities { countActivity(label, by: 1) } }
    if !op.observers.isEmpty { for observer in op.observers { observer.operationDidStart(op) } }
    if op.extrasStorage != nil { armTimeouts(op, at: now) }  // Scheduler+Timeouts
    if let memory, op.freshness != nil { memory.starting(op) }
    if let body = op.body {
      body.start(op, scheduler: self)
    } else {
      finish(op, .succeeded)
    }
  }

  /// Ends an operation exactly once; later calls are ignored. A cancelled operation whose
  /// body returned normally still ends `cancelled`.
  public func finish(
    _ op: OperationNode, _ outcome: Outcome, error: String? = nil, traceback: String? = nil,
    kind: FailureKind? = nil
  ) {
    guard !op.isFinished else { return }
    var outcome = op.isCancelled && outcome == .succeeded ? .cancelled : outcome
    if op.timedOut && outcome == .cancelled { outcome = .failed }
    var error = error, kind = kind
    if outcome == .succeeded, op.state == .executing, let memory, op.freshness != nil,
      let missing = memory.missingOutputs(op)
    {
      (outcome, error, kind) = (.failed, missing, .command)
    }
    if outcome == .failed || outcome == .cancelled, op.state == .executing, !op.cleanedUp, op.cleanup != nil {
      return cleanUp(op, outcome, error: error, traceback: traceback, kind: kind)  // Scheduler+Cleanup
    }
    // A timed-out attempt is tried again like a failed one; a cancelled one is not.
    if outcome == .failed, op.state == .executing, !op.isCancelled || op.timedOut, !stopping.halted,
      let retry = op.retry, op.attempt <= retry.max
    {
      return tryAgain(op, retry, error: error ?? op.error ?? "failed")
    }
    stopTimeouts(op)
    let wasExecuting = op.state == .executing
    if wasExecuting { leaveExecution(op) }  // slot, activities, resources
    let now = clock.now
    if let memory, wasExecuting, !op.isGroup { memory.ended(op, outcome, error: error, at: now) }
    settle(op, outcome, error: error, traceback: traceback, kind: kind, at: now)
    let duration = op.duration
    ledger.finished(op, outcome, executing: wasExecuting, duration: duration)  // counts, weights
    waits.forget(op)
    announcer.finished(op, outcome, duration: duration ?? 0, at: elapsed(at: now))  // progress, finish or held
    if !op.observers.isEmpty { for observer in op.observers { observer.operationDidFinish(op) } }
    carryOut(finishOf: op)  // children, handlers, the fail-fast stop, dependents: Scheduler+Cascade
  }

  /// What an executing operation gives back when it finishes: its queue slot (unless it gave
  /// it back to wait), its place among the executing, its activities and resources.
  @inline(__always)
  private func leaveExecution(_ op: OperationNode) {
    if !op.isGroup {
      if op.slotYielded { op.slotYielded = false } else { op.queue.running -= 1 }
      op.queue.freedBy = op
    }
    removeExecuting(op)
    if terminal.declared > 0 { leaveTerminal(op, at: elapsed(at: clock.now)) }
    if !op.activities.isEmpty { for label in op.activities { countActivity(label, by: -1) } }
    release(op)
  }

  /// The operation's final state: outcome, error (its files kept if it names any), the kind
  /// of failure, its traceback and finish time; a success's or skip's progress is complete.
  @inline(__always)
  private func settle(
    _ op: OperationNode, _ outcome: Outcome, error: String?, traceback: String?,
    kind: FailureKind?, at now: Double
  ) {
    op.state = .finished
    op.outcome = outcome
    if op.isPaused { setPaused(op, false) }  // cancelled before it was resumed
    op.error = error ?? op.error
    if outcome == .failed, let error = op.error { SpillFolder.shared.keepNamed(in: error) }  // shown to the user
    switch outcome {
    case .succeeded: op.errorKind = nil
    case .failed: op.errorKind = op.timedOut ? .timeout : kind ?? .script
    case .cancelled: op.errorKind = stopping.interrupts > 0 ? .interrupted : .cancelled
    case .skipped: op.errorKind = kind ?? .dependency
    }
    op.traceback = traceback
    op.finishTime = now
    if op.hasProgress && (outcome == .succeeded || outcome == .skipped) && op.progress.childCount == 0 {
      // Succeeding means complete; but a node with children is never completed by hand (its
      // units would count twice): it ends at the fraction its children report.
      let progress = op.progress
      if progress.total <= 0 { progress.total = 1 }
      progress.completed = progress.total
    }
  }

  func removeExecuting(_ op: OperationNode) {
    announcer.dropWaitingStart(of: op)  // it ended before a tick: no start for it
    let index = op.executingIndex
    let last = executing.removeLast()
    if last !== op {
      executing[index] = last
      last.executingIndex = index
    }
  }

  /// Ends a failed attempt and starts the next one after the policy's delay. The queue slot
  /// is given back meanwhile; cancelling during the wait finishes the operation `cancelled`.
  func tryAgain(_ op: OperationNode, _ retry: RetryPolicy, error: String) {
    let delay = retry.delay(after: op.attempt)
    if let memory { memory.ended(op, .failed, error: error, at: clock.now) }
    if op.attempt == 1, let start = op.startTime { op.firstStartTime = op.remoteStartTime ?? start }
    stopTimeouts(op)
    if op.slotYielded { op.slotYielded = false } else { op.queue.running -= 1 }
    ledger.retried(op)
    removeExecuting(op)
    // Its terminal goes back until the next attempt starts (which waits for what runs then).
    if terminal.declared > 0 { leaveTerminal(op, at: elapsed(at: clock.now)) }
    for label in op.activities { countActivity(label, by: -1) }
    release(op)
    op.state = .pending
    if op.timedOut { (op.timedOut, op.isCancelled) = (false, false) }  // the next attempt has its own time
    op.cleanedUp = false
    announcer.retried(op, error: error, delay: delay, at: elapsed)
    after(delay) { [unowned self, unowned op] in
      guard op.state == .pending, !op.isFinished, !op.isCancelled else { return }
      absorbSignals()  // an interrupt during the wait cancelled it: no next attempt
      guard !op.isFinished else { return }
      op.state = .ready
      op.queue.ready.insert(readyEntry(op))
    }
  }

  /// Cancels an operation: a pending one finishes `cancelled` at once; a running one is asked
  /// to stop and finishes when its body has stopped. Finished operations are left alone.
  /// Its progress is cancelled too (its handlers fire); a paused one is let go to stop.
  public func cancel(_ op: OperationNode, reason: String = "cancelled") {
    guard !op.isFinished, !op.isCancelled else { return }
    markCancelled(op, reason: reason)
    // Its progress last (its handlers fire; told back here, nothing more happens): a group's
    // children are cancelled with the group's reason first.
    defer { if op.hasProgress { op.progress.cancel() } }
    if op.state == .executing, let body = op.body {
      announcer.changed(op, .cancelRequested(reason), at: elapsed)
      body.interrupt(op, scheduler: self, reason: reason)
      if op.isPaused {
        // Stopped processes get the SIGTERM when they continue; the body wakes to stop.
        setPaused(op, false)
        commands.signal(ownedBy: op, SIGCONT)
        body.resume(op, scheduler: self)
      }
    } else {
      finish(op, .cancelled, error: reason)
    }
  }

  /// What `cancel` records before it stops the body (a group's interrupt marks nested groups).
  func markCancelled(_ op: OperationNode, reason: String) {
    op.isCancelled = true
    op.error = reason
  }

  /// A command of `op`'s body was stopped by its timeout with its output in files
  /// (`whereOutputIs`): the timeout's error says where, so they stay as a failure's do.
  public func timedOut(_ op: OperationNode, outputIn whereOutputIs: String) {
    guard op.timedOut, !op.isFinished, !whereOutputIs.isEmpty, let error = op.error else { return }
    op.error = error + whereOutputIs
  }
}
