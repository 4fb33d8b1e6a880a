// Announcer: the engine's only maker of RunEvents, and the coalescing a live view needs.

import Glibc

/// Turns what happens to operations into `RunEvent`s for the sinks, making only the events
/// some sink reads (`interests`), and holds back what waits for the next tick: starts
/// (`startsAtTick`), successes (`successesAtTick`) and progress changes. It is handed the
/// times (seconds since the run started) and snapshots it reports; it reads no other part of
/// the scheduler, and its only call-outs are the sinks.
final class Announcer {
  /// The reporters; set them with `setSinks`, which first tells them what was held.
  @exclusivity(unchecked) private(set) var sinks: [any EventSink] = []
  /// What the sinks read, together.
  @exclusivity(unchecked) private(set) var interests: EventInterests = []
  /// Seconds between `tick` and `runProgress` events (nil: none; the live view sets ~1/15 s).
  @exclusivity(unchecked) var tickInterval: Double?
  /// When the next tick is due (clock time; nil: at the first look).
  @exclusivity(unchecked) private var nextTick: Double?
  /// Operations whose progress changed since the last tick.
  @exclusivity(unchecked) private var progressDirty: [OperationNode] = []
  /// Executing operations whose start waits for the next tick (`startsAtTick`): a count, not
  /// a list, so that a tick after many short operations touches none of them.
  @exclusivity(unchecked) private var unannouncedStarts = 0
  /// Successes not yet told (`successesAtTick`): told together before the next event.
  @exclusivity(unchecked) private var heldSuccesses: [Success] = []

  /// Replaces the sinks; what was held (`at`: the time now) goes to the sinks that were there
  /// when it happened.
  func setSinks(_ sinks: [any EventSink], at time: @autoclosure () -> Double) {
    if !heldSuccesses.isEmpty { flushHeld(at: time()) }
    self.sinks = sinks
    interests = sinks.reduce([]) { $0.union($1.interests) }
  }

  /// Tells every sink `event`, after the successes held (told as of `time`, the time now).
  @inline(__always)
  func emit(_ event: RunEvent, at time: Double) {
    if !heldSuccesses.isEmpty { flushHeld(at: time) }
    for sink in sinks { sink.receive(event) }
  }

  /// The successes held since the last event, as one `successes` event, before anything
  /// else is told: every event keeps its place in the order things happened.
  func flushHeld(at time: @autoclosure () -> Double) {
    guard !heldSuccesses.isEmpty else { return }
    let event = RunEvent.successes(time: time(), operations: heldSuccesses)
    heldSuccesses = []
    for sink in sinks { sink.receive(event) }
  }

  /// The run started (its first operation was scheduled).
  func runStarted() {
    emit(.runStart(time: 0), at: 0)
  }

  /// `op` started at `time`: told now, at the next tick, or not at all, as the sinks read.
  @inline(__always)
  func started(_ op: OperationNode, at time: Double) {
    guard !interests.isEmpty else { return }
    if interests.contains(.starts) || op.isGroup && interests.contains(.startsAtTick) {
      announceStart(of: op, startedAt: time, now: time)
    } else if interests.contains(.startsAtTick) {
      op.startUnannounced = true
      unannouncedStarts += 1
    }
  }

  /// Tells `op`'s start (it started at `startedAt`), if it was not yet.
  /// The 90th percentile of an operation's recorded durations (the run store's), if any.
  var usualDuration: ((OperationNode) -> Double?)?

  /// The operation whose outcome brought another's (`Scheduler.cause(of:)`), asked for a
  /// finish that is not a success while a sink reads `causes`.
  var causeOf: ((OperationNode) -> OperationNode?)?

  func announceStart(of op: OperationNode, startedAt: Double, now: Double) {
    dropWaitingStart(of: op)
    emit(
      .operationStart(
        time: startedAt, name: op.name, attempt: op.attempt,
        reason: op.attempt == 1 && interests.contains(.startReasons) ? op.startCause.map(StartReason.init) : nil,
        group: op.group?.name,
        isGroup: op.isGroup, sandbox: op.body?.sandbox, usual: usualDuration?(op)), at: now)
  }

  /// `op` stopped executing before its start was told (it ended before a tick): no start for it.
  @inline(__always)
  func dropWaitingStart(of op: OperationNode) {
    guard op.startUnannounced else { return }
    op.startUnannounced = false
    unannouncedStarts -= 1
  }

  /// `op`'s progress changed: told at the next tick, once however often it changed.
  func progressChanged(_ op: OperationNode) {
    progressDirty.append(op)
  }

  /// `op` finished with `outcome` after `duration` seconds (0: it never ran): its final
  /// progress, then its finish, at once, held for the next event (a success, with
  /// `successesAtTick`), or not at all (a success no sink reads).
  @inline(__always)
  func finished(_ op: OperationNode, _ outcome: Outcome, duration: Double, at time: Double) {
    // The finish most operations make, a success no sink reads, costs no call.
    if outcome == .succeeded && !op.hasProgress && op.extrasStorage?.why == nil
      && interests.isDisjoint(with: [.successes, .successesAtTick])
    {
      return
    }
    tell(finished: op, outcome, duration: duration, at: time)
  }

  private func tell(finished op: OperationNode, _ outcome: Outcome, duration: Double, at time: Double) {
    if op.hasProgress { op.progressDirty = false }
    guard !sinks.isEmpty else { return }  // nobody to tell: no event is made
    if op.hasProgress {
      emit(.operationProgress(time: time, name: op.name, progress: op.snapshotProgress()), at: time)
    }
    let why = op.extrasStorage?.why
    let told = outcome != .succeeded || interests.contains(.successes) || why != nil
    if !told && interests.contains(.successesAtTick) && !op.isGroup {
      heldSuccesses.append(.init(name: op.name, duration: duration))
    } else if told || interests.contains(.successesAtTick) {  // a group's at once, as its start
      let details =
        op.error == nil && op.traceback == nil && !op.hasOutput && op.errorKind == nil && why == nil
        ? nil
        : FinishDetails(
          error: op.error, traceback: op.traceback, output: op.output, errorKind: op.errorKind,
          earlierOutputLines: op.earlierOutputLines, reuse: op.reuse, why: why,
          cause: outcome != .succeeded && interests.contains(.causes) ? causeOf?(op)?.name : nil)
      emit(
        .operationFinish(time: time, name: op.name, outcome: outcome, duration: duration, details: details),
        at: time)
    }
  }

  /// Attempt `attempt` of `op` failed with `error`; the next one starts in `delay` seconds.
  func retried(_ op: OperationNode, error: String, delay: Double, at time: Double) {
    emit(.operationRetry(time: time, name: op.name, attempt: op.attempt, error: error, delay: delay), at: time)
  }

  /// Output text of `op`'s command.
  func output(_ text: String, stream: OutputChannel, of op: OperationNode, at time: Double) {
    emit(.output(time: time, name: op.name, stream: stream, text: text), at: time)
  }

  /// A line the script printed (or, `note`, taskrun's own note about the run): to the
  /// reporters, or when there are none to stdout (a note to stderr).
  func message(_ text: String, from op: OperationNode?, note: Bool = false, at time: @autoclosure () -> Double) {
    if sinks.isEmpty {
      if note {
        fflush(nil)
        writeStandardError(text + "\n")
      } else {
        print(text)
      }
    } else {
      let time = time()
      emit(.message(time: time, operation: op?.name, text: text, note: note), at: time)
    }
  }

  /// `op` became ready: told only to sinks that read `readiness` (one event per operation).
  @inline(__always)
  func ready(_ op: OperationNode, at time: @autoclosure () -> Double) {
    guard interests.contains(.readiness) else { return }
    let time = time()
    emit(.operationChange(time: time, name: op.name, change: .ready), at: time)
  }

  /// `op` was asked to cancel, paused or resumed.
  func changed(_ op: OperationNode, _ change: OperationChange, at time: @autoclosure () -> Double) {
    guard !sinks.isEmpty else { return }
    let time = time()
    emit(.operationChange(time: time, name: op.name, change: change), at: time)
  }

  /// `queue` was suspended, resumed or given a new limit.
  func changed(_ queue: WorkQueue, _ change: QueueChange, at time: Double) {
    emit(.queueChange(time: time, name: queue.name, change: change), at: time)
  }

  /// `count` operations with activity `label` execute now.
  func activity(_ label: String, count: Int, at time: Double) {
    emit(.activity(time: time, label: label, count: count), at: time)
  }

  /// `op`'s command, running elsewhere, is now in `state` (its start, if it waits for a
  /// tick, is told first, as of `startedAt`).
  func remoteState(of op: OperationNode, _ state: RemoteState, startedAt: Double, at time: Double) {
    if op.startUnannounced { announceStart(of: op, startedAt: startedAt, now: time) }
    emit(.remoteState(time: time, name: op.name, state: state), at: time)
  }

  /// A question is being asked on the terminal (`text`), or its answer came (nil).
  func prompt(_ text: String?, at time: Double) {
    emit(.prompt(time: time, text: text), at: time)
  }

  /// Whether a tick is due at clock time `now`; if so the next one is due `tickInterval` later.
  func tickDue(at now: Double) -> Bool {
    guard let interval = tickInterval else { return false }
    if let nextTick, now < nextTick { return false }
    nextTick = now + interval
    return true
  }

  /// When the next tick is due (clock time), if ticks are wanted.
  var nextTickDeadline: Double? { tickInterval == nil ? nil : nextTick }

  /// A tick at `time`: the starts that waited for it (of `executing`, which started at their
  /// `startTime` minus `runStart`), the progress that changed, the run's `progress`, `tick`.
  func tick(at time: Double, runStart: Double, executing: [OperationNode], progress: RunProgress) {
    if unannouncedStarts > 0 {
      for op in executing where op.startUnannounced {
        announceStart(of: op, startedAt: op.startTime.map { $0 - runStart } ?? time, now: time)
      }
    }
    let changed = progressDirty
    progressDirty.removeAll(keepingCapacity: true)
    for op in changed where op.progressDirty {
      op.progressDirty = false
      emit(.operationProgress(time: time, name: op.name, progress: op.snapshotProgress()), at: time)
    }
    runProgress(progress, at: time)
    emit(.tick(time: time), at: time)
  }

  /// The run's progress (every tick, at an interrupt, at the end).
  func runProgress(_ progress: RunProgress, at time: Double) {
    emit(.runProgress(time: time, progress: progress), at: time)
  }

  /// The run is over: its final progress, then `run_finish` with `summary`.
  func runFinished(_ summary: RunSummary, progress: RunProgress, at time: Double) {
    runProgress(progress, at: time)
    emit(.runFinish(time: time, summary: summary), at: time)
  }

  /// A new run's first tick comes at once.
  func beginNewRun() {
    nextTick = nil
  }
}
