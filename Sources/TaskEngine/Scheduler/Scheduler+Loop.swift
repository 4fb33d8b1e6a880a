// Scheduler+Loop: the run loop over the EventLoop and the CommandTable, what command reports do, stall detection.
import Dispatch
import FoundationEssentials
import Glibc

extension Scheduler {
  /// Calls `action` on the scheduler's thread after `seconds`. Returns its timer, for `cancelTimer`.
  @discardableResult
  public func after(_ seconds: Double, _ action: @escaping () -> Void) -> TimerID {
    loop.after(seconds, action)
  }

  public func cancelTimer(_ timer: TimerID?) { loop.cancel(timer) }

  /// Runs a command for `op` (its output is recorded on `op`); `completion` gets the result
  /// on the scheduler's thread. Returns its token, for `terminateCommand`. `remote`: an
  /// operation's own command, which runs where its queue's executor says (`sh()` inside a
  /// body runs here); `executor`, when given, runs it whatever the queue says.
  @discardableResult
  public func runCommand(
    _ spec: CommandSpec, for op: OperationNode?, remote: Bool = false,
    on executor: (any CommandExecutor)? = nil,
    completion: @escaping (CommandResult) -> Void
  ) -> CommandToken {
    // `--resume`: the batch job a killed taskrun left running for this operation is followed.
    let job = remote ? op.flatMap { memory?.takeJob(of: $0) } : nil
    return commands.run(
      spec, for: op, on: executor ?? (remote ? op?.queue.executor : nil), attaching: job, completion: completion)
  }

  /// An executor of this run, ended at every exit (`endExecutors`).
  public func use(_ executor: any CommandExecutor) { commands.use(executor) }

  /// Nothing any executor started outlives the run.
  public func endExecutors() { commands.endAll() }

  /// Asks a command to stop: SIGTERM to its process group, SIGKILL after `killGrace`.
  public func terminateCommand(_ token: CommandToken) { commands.terminate(token, grace: killGrace) }

  /// Runs blocking `work` off the scheduler's thread (on `queue`: a serial one serializes,
  /// as prompts must be); `then` gets its answer on the scheduler's thread.
  public func perform(
    on queue: DispatchQueue = .global(), _ work: @escaping @Sendable () -> String?,
    then: @escaping (String?) -> Void
  ) {
    loop.perform(on: queue, work, then: then)
  }

  // MARK: The loop

  /// Runs until `done()` holds. Returns false if it stopped because nothing could make
  /// progress any more (a stall) while `done()` was still false.
  @discardableResult
  public func run(until done: () -> Bool, onStall: () -> Bool = { false }) -> Bool {
    defer { emitHeldSuccesses() }  // whoever waited (a REPL's prompt, a top-level wait) sees them
    while true {
      // Bodies start inside pump and may make work ready on a queue it already passed
      // (or one they just made): pump until nothing more starts.
      while pump() {}
      tickIfDue()
      commitMemory()
      if done() { return true }
      // Both, every time: a body resumed by a timer at each of its time slices must not keep
      // commands' exits and output waiting in the inbox until it ends.
      let fired = loop.fireDue()
      if handleInbox() || fired { continue }
      if done() { return true }
      // Paused work waits for its resume (the live view still ticks meanwhile).
      if commands.isEmpty && loop.isIdle && !waitsForResume() {
        if cancelUnstartable() || onStall() { continue }
        return done()
      }
      commitMemory(beforeWaiting: true)  // first: it may set the timer the wait must end for
      let deadlines = [loop.nextDeadline, tickInterval == nil ? nil : nextTick].compactMap { $0 }
      loop.idle(until: deadlines.min())
    }
  }

  func handleInbox() -> Bool {
    // Busy all along: still see commands end, and a control socket's requests.
    if !commands.isEmpty || inbox.hasWatcher { inbox.watchIfDue() }
    let items = inbox.drain()
    for item in items {
      switch item {
      case .signal:
        absorbSignals()
      case .completion(let number, let answer):
        loop.complete(number, answer: answer)
      case .wake:
        break
      default:
        guard let report = commands.route(item) else { break }
        handle(report)
      }
    }
    return !items.isEmpty
  }

  /// Carries out what a command reported (`CommandTable.route`).
  @inline(__always)
  func handle(_ report: __owned CommandReport) {
    switch report {
    case .output(let op, let text, let stream):
      record(output: text, stream: stream, for: op)
    case .bytes(let op, let bytes):
      op.keepOutput(bytes: bytes)
    case .overwrite(let op, let text):
      op.outputObserver?(text)
    case .state(let op, let state):
      guard op.remoteState != state else { break }
      if !state.queued, op.remoteState?.queued == true { op.remoteStartTime = remoteStart(of: op, state) }
      op.remoteState = state
      if let memory, state.queued, state.folder != nil { memory.submitted(op, state) }
      let now = clock.now
      announcer.remoteState(of: op, state, startedAt: elapsed(at: op.startTime ?? now), at: elapsed(at: now))
    case .exited(let result, let completion):
      completion(result)
    }
  }

  // MARK: Queue control

  public func suspend(_ queue: WorkQueue) {
    guard !queue.isSuspended else { return }
    queue.isSuspended = true
    announcer.changed(queue, .suspended, at: elapsed)
  }
  public func resume(_ queue: WorkQueue) {
    guard queue.isSuspended else { return }
    queue.isSuspended = false
    announcer.changed(queue, .resumed, at: elapsed)
  }
  /// At most `limit` of its operations execute at once (-1: no limit), from the next step on.
  public func setLimit(_ queue: WorkQueue, _ limit: Int) {
    guard queue.maxConcurrent != limit else { return }
    queue.maxConcurrent = limit
    announcer.changed(queue, .limit(limit), at: elapsed)
  }
  public func cancelAll(_ queue: WorkQueue, reason: String = "cancelled") {
    for op in queue.operations where !op.isFinished { completely { cancel(op, reason: reason) } }
  }
}
