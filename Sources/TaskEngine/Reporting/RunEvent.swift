// RunEvent: the one stream every reporter consumes; nothing reaches into the scheduler.

/// Which output stream of a command a chunk of text came from.
public enum OutputChannel: String, Sendable {
  case stdout, stderr
}

/// What happened during a run, in the order it happened.
public enum RunEvent: Sendable {
  case runStart(time: Double)
  /// `reason`: what it waited for last before this start (nil: nothing, or a retry);
  /// `group`: the group it runs in; `isGroup`: it is a group (its children follow);
  /// `sandbox`: what its commands asked `--sandbox` for beyond the defaults (nil: nothing).
  /// `usual`: the 90th percentile of its recorded durations, from the run store (nil: not
  /// known), so a view can mark it once it runs longer.
  case operationStart(
    time: Double, name: String, attempt: Int, reason: StartReason?, group: String?, isGroup: Bool,
    sandbox: SandboxGrant? = nil, usual: Double? = nil)
  /// `details`: its error, traceback and output (nil: a success that printed nothing).
  case operationFinish(time: Double, name: String, outcome: Outcome, duration: Double, details: FinishDetails?)
  /// Operations that succeeded since the last event, in the order they did, with how long
  /// each ran: made instead of their `operationFinish` while no sink reads successes at once
  /// and one reads them at its frames (`EventInterests.successesAtTick`).
  case successes(time: Double, operations: [Success])
  case output(time: Double, name: String, stream: OutputChannel, text: String)
  /// Attempt `attempt` failed with `error`; the next one starts in `delay` seconds.
  case operationRetry(time: Double, name: String, attempt: Int, error: String, delay: Double)
  /// The script printed `text` (a whole line; `operation`: the body that printed it, if any),
  /// or (`note`) taskrun said it about the run, as its other notes, on standard error.
  case message(time: Double, operation: String?, text: String, note: Bool = false)
  /// A question is being asked on the terminal (`text`), or the answer came (nil): a live
  /// view steps aside meanwhile.
  case prompt(time: Double, text: String?)
  /// How many operations with the activity indicator `label` execute now (it changed).
  case activity(time: Double, label: String, count: Int)
  /// An operation's progress changed (coalesced to one event per tick), or it finished.
  case operationProgress(time: Double, name: String, progress: ProgressSnapshot)
  /// The whole run's progress, at most every `Scheduler.tickInterval` and once at the end.
  case runProgress(time: Double, progress: RunProgress)
  /// An operation's command, running elsewhere (a cluster), was queued there or started.
  case remoteState(time: Double, name: String, state: RemoteState)
  /// Something happened to an operation between its start and its finish, or before it
  /// started: it became ready, it was asked to cancel while executing, paused or resumed.
  case operationChange(time: Double, name: String, change: OperationChange)
  /// A queue was suspended or resumed, or its limit changed.
  case queueChange(time: Double, name: String, change: QueueChange)
  /// A heartbeat every `Scheduler.tickInterval` while the run is active (for redrawing).
  case tick(time: Double)
  case runFinish(time: Double, summary: RunSummary)
}

extension RunEvent {
  /// `successes` as the `operationFinish` events it stands for; any other event as it is.
  public var finishes: [RunEvent] {
    guard case .successes(let time, let operations) = self else { return [self] }
    return operations.map {
      .operationFinish(time: time, name: $0.name, outcome: .succeeded, duration: $0.duration, details: nil)
    }
  }
}

/// What `operationChange` says happened.
public enum OperationChange: Sendable, Equatable {
  /// Its dependencies and conditions let it start: it waits for its queue, resources or a
  /// resume (made only for sinks that read `readiness`).
  case ready
  /// Asked to cancel while executing (with the reason); its finish comes when it stopped.
  case cancelRequested(String)
  case paused, resumed
}

/// What `queueChange` says happened.
public enum QueueChange: Sendable, Equatable {
  case suspended, resumed
  /// `max_concurrent` is now this (-1: unlimited).
  case limit(Int)
}

/// A consumer of run events (a reporter).
public protocol EventSink: AnyObject {
  func receive(_ event: RunEvent)
  /// Which of the events every operation makes it reads (fixed for its life). The scheduler
  /// makes one only while some sink reads it: a quiet run spends nothing on them.
  var interests: EventInterests { get }
}

extension EventSink {
  public var interests: EventInterests { .all }
}

/// The events every operation makes, which a sink may not need.
public struct EventInterests: OptionSet, Sendable {
  public let rawValue: Int
  public init(rawValue: Int) { self.rawValue = rawValue }
  /// `operationStart`.
  public static let starts = EventInterests(rawValue: 1 << 0)
  /// `operationFinish` of an operation that succeeded (any other outcome's is always made).
  public static let successes = EventInterests(rawValue: 1 << 1)
  /// The `reason` of `operationStart` (without it, nil): naming what an operation started
  /// after makes strings for every operation.
  public static let startReasons = EventInterests(rawValue: 1 << 2)
  /// `operationStart` of an operation still executing at the next tick, emitted then (before
  /// that tick's progress) or before a `remoteState` about it, whichever comes first, with
  /// the time it started; a group's at once. Without `starts`: a view of what runs needs no
  /// start, and no event, for an operation that started and finished between two frames.
  public static let startsAtTick = EventInterests(rawValue: 1 << 3)
  /// `successes` in place of `operationFinish` for operations that succeeded (not groups):
  /// held until the next event or tick, or until the loop returns to whoever waited for it
  /// (`Scheduler.run(until:)`), so a view that writes a line for each writes a
  /// frame's lines together and no success makes an event of its own.
  public static let successesAtTick = EventInterests(rawValue: 1 << 4)
  /// `output`: without it (and without a `progress =` pattern or a remote executor that
  /// filters it) a command's output is not decoded into text as it comes, only its kept
  /// tail when a report needs it.
  public static let output = EventInterests(rawValue: 1 << 5)
  /// `operationChange(.ready)`: one more event for every operation (not in `all`).
  public static let readiness = EventInterests(rawValue: 1 << 6)
  /// `FinishDetails.cause` of a finish that is not a success: which operation's outcome
  /// brought it (not in `all`).
  public static let causes = EventInterests(rawValue: 1 << 7)
  public static let all: EventInterests = [.starts, .successes, .startReasons, .output]
}
