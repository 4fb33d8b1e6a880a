// RunValues: the values events carry (progress, summary, start reasons, remote states); plain Sendable data.

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
  /// It did not run: up to date, or reused by `--resume`.
  public let reuse: Reuse?
  /// Why it ran or did not, as the run store's check said ("input a.c changed").
  public let why: String?
  /// The operation whose outcome brought this one's (`Scheduler.cause(of:)`): told only to
  /// sinks that read `EventInterests.causes`, else nil.
  public let cause: String?

  public init(
    error: String?, traceback: String?, output: String, errorKind: FailureKind?,
    earlierOutputLines: Int = 0, reuse: Reuse? = nil, why: String? = nil, cause: String? = nil
  ) {
    (self.error, self.traceback, self.output, self.errorKind) = (error, traceback, output, errorKind)
    (self.earlierOutputLines, self.reuse, self.why, self.cause) = (earlierOutputLines, reuse, why, cause)
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
  /// A reason as the run store kept it.
  public init(after: String, kind: String, detail: String?) {
    (self.after, self.kind, self.detail) = (after, kind, detail)
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
  /// Where a batch job keeps its output and status (what `--resume` needs to re-attach it).
  public var folder: String?
  public init(
    executor: String, job: String, queued: Bool, reason: String? = nil, node: String? = nil,
    runningFor: Double? = nil, folder: String? = nil
  ) {
    (self.executor, self.job, self.queued, self.reason, self.node) = (executor, job, queued, reason, node)
    (self.runningFor, self.folder) = (runningFor, folder)
  }

  /// "queued on slurm as job 77 (Resources)", "running on node c12 as slurm job 77".
  public var sentence: String {
    queued
      ? "queued on \(executor) as job \(job)" + (reason.map { " (\($0))" } ?? "")
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
  /// The user info of the progress it shows (or of the operation's own).
  public var userInfo: [String: ProgressNode.InfoValue] = [:]
  /// Its words already say so (a `file` progress's default additional description does).
  public var wordsSayPaused = false

  public init(
    completed: Int64, total: Int64, fraction: Double, indeterminate: Bool, description: String,
    additionalDescription: String, paused: Bool = false, userInfo: [String: ProgressNode.InfoValue] = [:]
  ) {
    (self.completed, self.total, self.fraction, self.indeterminate) = (completed, total, fraction, indeterminate)
    (self.description, self.additionalDescription, self.paused) = (description, additionalDescription, paused)
    self.userInfo = userInfo
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

/// Counts and failures of a finished run.
public struct RunSummary: Sendable, Equatable {
  public var succeeded = 0, failed = 0, cancelled = 0, skipped = 0
  /// Of `succeeded`: those that did not run, being up to date or reused by `--resume`.
  public var upToDate = 0, resumed = 0
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
    let ran = succeeded - upToDate - resumed
    var text = "\(ran) succeeded"
    if upToDate > 0 { text += ", \(upToDate) up to date" }
    if resumed > 0 { text += ", \(resumed) resumed" }
    if failed > 0 { text += ", \(failed) failed" }
    if cancelled > 0 { text += ", \(cancelled) cancelled" }
    if skipped > 0 { text += ", \(skipped) skipped" }
    return text
  }
}
