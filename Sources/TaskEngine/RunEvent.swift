// RunEvent: the one stream every reporter consumes; nothing reaches into the scheduler.

/// Which output stream of a command a chunk of text came from.
public enum OutputChannel: String, Sendable {
  case stdout, stderr
}

/// What happened during a run, in the order it happened.
public enum RunEvent: Sendable {
  case runStart(time: Double)
  /// `reason`: what it waited for last before this start (nil: nothing, or a retry);
  /// `group`: the group it runs in; `isGroup`: it is a group (its children follow).
  case operationStart(time: Double, name: String, attempt: Int, reason: StartReason?, group: String?, isGroup: Bool)
  /// `details`: its error, traceback and output (nil: a success that printed nothing).
  case operationFinish(time: Double, name: String, outcome: Outcome, duration: Double, details: FinishDetails?)
  /// Operations that succeeded since the last event, in the order they did, with how long
  /// each ran: made instead of their `operationFinish` while no sink reads successes at once
  /// and one reads them at its frames (`EventInterests.successesAtTick`).
  case successes(time: Double, operations: [Success])
  case output(time: Double, name: String, stream: OutputChannel, text: String)
  /// Attempt `attempt` failed with `error`; the next one starts in `delay` seconds.
  case operationRetry(time: Double, name: String, attempt: Int, error: String, delay: Double)
  /// The script printed `text` (a whole line; `operation`: the body that printed it, if any).
  case message(time: Double, operation: String?, text: String)
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
  /// A heartbeat every `Scheduler.tickInterval` while the run is active (for redrawing).
  case tick(time: Double)
  case runFinish(time: Double, summary: RunSummary)
}

extension RunEvent {
  /// `successes` as the `operationFinish` events it stands for; any other event as it is.
  public var finishes: [RunEvent] {
    guard case .successes(let time, let operations) = self else { return [self] }
    return operations.map { .operationFinish(time: time, name: $0.name, outcome: .succeeded, duration: $0.duration, details: nil) }
  }
}

/// An operation that succeeded, and how long it ran (see `RunEvent.successes`).
public struct Success: Sendable, Equatable {
  public var name: String
  public var duration: Double
}

/// What a finished operation left besides its outcome. An object made only when there is
/// something in it: every operation makes a finish event, and with these values in the
/// event's tuple every event was destroyed through its type's metadata (the runtime's
/// generic tuple code), and copied so at every sink.
public final class FinishDetails: Sendable {
  public let error: String?
  public let traceback: String?
  public let output: String
  public let errorKind: FailureKind?
  /// Lines of output before `output` that were not kept.
  public let earlierOutputLines: Int

  public init(error: String?, traceback: String?, output: String, errorKind: FailureKind?,
              earlierOutputLines: Int = 0) {
    (self.error, self.traceback, self.output, self.errorKind) = (error, traceback, output, errorKind)
    self.earlierOutputLines = earlierOutputLines
  }
}

/// Why an operation started when it did: the operation it started after, how
/// (`StartCause.Kind`: dependency, condition, queue, resource, producer, group) and the
/// queue's, resource's or condition's name.
public struct StartReason: Sendable, Equatable {
  public var after: String
  public var kind: String
  public var detail: String?
  public init(_ cause: StartCause) {
    (after, kind, detail) = (cause.after.name, cause.kind.rawValue, cause.detail)
  }
}

/// Where a command that runs elsewhere is: `queued` in the cluster (with the reason it
/// waits), or running (on `node`); `job` is the cluster's id for it.
public struct RemoteState: Sendable, Equatable {
  public var executor: String
  public var job: String
  public var queued: Bool
  public var reason: String?
  public var node: String?
  /// Of a job that runs: seconds it had run when this state was seen (from its own start
  /// mark), so its duration counts from its start, not from the poll that saw it; nil: now.
  public var runningFor: Double?
  public init(executor: String, job: String, queued: Bool, reason: String? = nil, node: String? = nil,
              runningFor: Double? = nil) {
    (self.executor, self.job, self.queued, self.reason, self.node) = (executor, job, queued, reason, node)
    self.runningFor = runningFor
  }

  /// "queued on slurm as job 77 (Resources)", "running on node c12 as slurm job 77".
  public var sentence: String {
    queued ? "queued on \(executor) as job \(job)" + (reason.map { " (\($0))" } ?? "")
      : "running" + (node.map { " on node \($0)" } ?? "") + " as \(executor) job \(job)"
  }
}

/// A progress node as it was at one moment.
public struct ProgressSnapshot: Sendable, Equatable {
  public var completed: Int64
  public var total: Int64
  public var fraction: Double
  public var indeterminate: Bool
  public var description: String
  public var additionalDescription: String
  /// The progress (or the one it shows) is paused.
  public var paused = false
  /// Its words already say so (a `file` progress's default additional description does).
  public var wordsSayPaused = false

  public init(completed: Int64, total: Int64, fraction: Double, indeterminate: Bool, description: String,
              additionalDescription: String, paused: Bool = false) {
    (self.completed, self.total, self.fraction, self.indeterminate) = (completed, total, fraction, indeterminate)
    (self.description, self.additionalDescription, self.paused) = (description, additionalDescription, paused)
  }
}

/// How far the run is: its overall fraction (operations composed by weight) and counts.
public struct RunProgress: Sendable, Equatable {
  /// Work done: finished operations by weight (not the cancelled ones: cancelling is not
  /// progress) and the running ones' own progress.
  public var fraction: Double = 0
  /// `failed` counts the cancelled operations too; `cancelled` counts only them.
  public var done = 0, running = 0, pending = 0, failed = 0, cancelled = 0
  /// Interrupted: nothing new starts and what runs is being stopped.
  public var stopping = false
  /// Seconds left at the current pace, once there is a pace to go by.
  public var eta: Double?
  public init() {}
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
  public static let all: EventInterests = [.starts, .successes, .startReasons, .output]
}

/// Counts and failures of a finished run.
public struct RunSummary: Sendable, Equatable {
  public var succeeded = 0, failed = 0, cancelled = 0, skipped = 0
  public var failures: [Failure] = []
  public var interrupted = false
  /// Why the run was ended from inside (`os.exit(3) ended the run`), if it was.
  public var ended: String? = nil
  public var elapsed: Double = 0
  /// The operations that took longest, longest first (at most five).
  public var slowest: [Timing] = []
  /// The chain of operations that decided the run's length: each waited for the one before.
  public var criticalPath: [Timing] = []

  /// An operation's name and how long it ran (on the critical path: why it started then).
  public struct Timing: Sendable, Equatable {
    public var name: String
    public var duration: Double
    public var reason: StartReason? = nil
  }

  /// One failed or cancelled operation, with its error and the tail of its output.
  public struct Failure: Sendable, Equatable {
    public var name: String
    public var outcome: Outcome
    public var error: String
    public var output: String
    /// Why it failed (`.child`: a group's child failed).
    public var kind: FailureKind? = nil
    /// For a group that failed because of a child: the operation that failed by itself
    /// inside it, however deep (the summary lists it once, not every group around it).
    public var cause: String? = nil
  }

  public init() {}

  public var allSucceeded: Bool { failed == 0 && cancelled == 0 && !interrupted }

  /// "3 succeeded, 1 failed, 2 skipped": the counts that are not zero (succeeded always).
  /// Appended, not joined: joining an array made every run's end scan the binary's
  /// conformance records once (a twentieth of an empty workflow's start-up).
  public var counts: String {
    var text = "\(succeeded) succeeded"
    if failed > 0 { text += ", \(failed) failed" }
    if cancelled > 0 { text += ", \(cancelled) cancelled" }
    if skipped > 0 { text += ", \(skipped) skipped" }
    return text
  }
}
