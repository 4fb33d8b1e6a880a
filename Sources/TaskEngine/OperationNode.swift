// OperationNode: one unit of work in the graph, its dependencies, state and outcome.
import FoundationEssentials
import Glibc

/// Where an operation is in its life. Cancellation is an outcome, not a state.
public enum OperationState: String, Sendable {
  case pending, ready, executing, finished
}

/// How a finished operation ended.
public enum Outcome: String, Sendable {
  case succeeded, failed, cancelled, skipped
}

/// Why an operation did not succeed, for scripts and tools that must tell the cases apart.
public enum FailureKind: String, Sendable {
  /// A command exited non-zero or could not start.
  case command
  /// A Lua body raised an error.
  case script
  /// A condition failed, skipped it, or its produced dependency did not succeed.
  case condition
  /// Skipped because its dependencies' outcomes did not meet its `when`.
  case dependency
  /// A group's child failed.
  case child
  case timeout, cancelled, interrupted
}

/// Which dependency outcomes let an operation run (`when = …` in Lua).
public enum RunPolicy: String, Sendable, CaseIterable {
  /// Every dependency succeeded (the default).
  case succeeded
  /// Every dependency finished, whatever its outcome (NSOperation semantics).
  case finished
  /// At least one dependency failed or was cancelled: cleanup and notification.
  case failed
}

/// Among ready operations of one queue, higher priority starts first.
public enum Priority: Int, Sendable, CaseIterable, Comparable {
  case veryLow = -8, low = -4, normal = 0, high = 4, veryHigh = 8

  public var name: String {
    switch self {
    case .veryLow: "very_low"
    case .low: "low"
    case .normal: "normal"
    case .high: "high"
    case .veryHigh: "very_high"
    }
  }

  public init?(name: String) {
    guard let match = Priority.allCases.first(where: { $0.name == name }) else { return nil }
    self = match
  }

  public static func < (a: Priority, b: Priority) -> Bool { a.rawValue < b.rawValue }
}

/// How a failed operation is tried again: up to `max` more times, waiting `delay` seconds
/// (doubled each time when `exponential`).
public struct RetryPolicy: Sendable, Equatable {
  public enum Backoff: String, Sendable, CaseIterable { case constant, exponential }
  public var max: Int
  public var delay: Double
  public var backoff: Backoff

  public init(max: Int, delay: Double = 0, backoff: Backoff = .constant) {
    self.max = max
    self.delay = delay
    self.backoff = backoff
  }

  /// Seconds to wait before attempt `attempt + 1`, after attempt `attempt` failed.
  public func delay(after attempt: Int) -> Double {
    Limits.wait(backoff == .constant ? delay : delay * pow(2, Double(min(attempt, 64) - 1)))
  }
}

/// Told about an operation's life, on the scheduler's thread, once per event, in order:
/// each start (one per attempt), each operation it produces, and its finish.
public protocol OperationObserver: AnyObject {
  func operationDidStart(_ op: OperationNode)
  func operation(_ op: OperationNode, didProduce produced: OperationNode)
  func operationDidFinish(_ op: OperationNode)
}

/// What an operation does when it starts. The scheduler calls `start` once and is told the
/// outcome through `Scheduler.finish`; `interrupt` asks a running body to stop (cancellation).
public protocol OperationBody: AnyObject {
  func start(_ operation: OperationNode, scheduler: Scheduler)
  func interrupt(_ operation: OperationNode, scheduler: Scheduler, reason: String)
  /// One line for plans and `why()`: "sh: make all", "lua function".
  var summary: String { get }
}

/// A node of the task graph: created by a script or by Swift code, run at most once.
///
/// Its fields, and the hot fields of the scheduler, its queues and the Lua host, are
/// `@exclusivity(unchecked)`: on the scheduler's one thread, every access to them is a whole
/// load or store, an update by an operator, or a collection method that runs no code that
/// could touch the same field (append, subscript, removal by identity, a copy for a loop).
/// No access can overlap another, so the runtime check guarded nothing and cost a quarter of
/// an operation's instructions. A field some code mutates while calling out (the ETA
/// estimator) keeps its check. The attribute holds inside this module only: code in other
/// modules that reads a field on the hot path goes through a method (`Scheduler.operation(id:)`).
public final class OperationNode {
  /// Declaration order; ties between equal priorities break on it.
  public let id: Int
  @exclusivity(unchecked) public internal(set) var name: String
  /// Its body waits for other operations and gave its queue slot back meanwhile.
  @exclusivity(unchecked) public internal(set) var slotYielded = false
  /// Named op1, op2, … by taskrun: a name the script chooses later wins over it.
  @exclusivity(unchecked) var hasDefaultName = false
  /// Skipped because something upstream failed (or was cancelled): `when = "failed"`
  /// downstream runs for it, as Airflow's one_failed counts upstream failures.
  @exclusivity(unchecked) public internal(set) var upstreamFailed = false
  @exclusivity(unchecked) public var body: (any OperationBody)?
  @exclusivity(unchecked) public internal(set) var queue: WorkQueue
  @exclusivity(unchecked) public var priority: Priority = .normal
  @exclusivity(unchecked) public var policy: RunPolicy = .succeeded
  @exclusivity(unchecked) public var weight: Double = 1
  @exclusivity(unchecked) var conditionsProduced = false
  @exclusivity(unchecked) var conditionsHeld = false
  @exclusivity(unchecked) public internal(set) var evaluatingConditions = false
  /// The group it runs in, if any, and (for a group) its children.
  @exclusivity(unchecked) public internal(set) weak var group: OperationNode?
  @exclusivity(unchecked) public internal(set) var isGroup = false
  @exclusivity(unchecked) var unfinishedChildren = 0
  @exclusivity(unchecked) public internal(set) var timedOut = false

  /// The operation's own progress (total 1 until the body sets it). Created on first use:
  /// most operations never report any. Its changes are reported, coalesced, as events.
  public lazy var progress: ProgressNode = {
    let node = ProgressNode(total: 1)
    node.onChange = { [unowned self] _ in
      guard !progressDirty else { return }
      progressDirty = true
      progressChanged?(self)
    }
    hasProgress = true
    return node
  }()
  @exclusivity(unchecked) public private(set) var hasProgress = false
  func snapshotProgress() -> ProgressSnapshot {
    let snapshot = ProgressSnapshot(progress, previous: lastProgress)
    lastProgress = snapshot
    return snapshot
  }
  @exclusivity(unchecked) var progressDirty = false
  @exclusivity(unchecked) var progressChanged: ((OperationNode) -> Void)?

  @exclusivity(unchecked) public internal(set) var state: OperationState = .pending
  @exclusivity(unchecked) public internal(set) var outcome: Outcome?
  @exclusivity(unchecked) public internal(set) var isCancelled = false
  @exclusivity(unchecked) public internal(set) var error: String?
  @exclusivity(unchecked) public internal(set) var errorKind: FailureKind?
  /// Combined output of its commands, kept for the failure report.
  @exclusivity(unchecked) public internal(set) var output = ""
  @exclusivity(unchecked) public internal(set) var startTime: Double?
  @exclusivity(unchecked) public internal(set) var finishTime: Double?
  @exclusivity(unchecked) public internal(set) var attempt = 0
  /// Why its first attempt started when it did (the critical path follows these). Touched
  /// by the scheduler's thread only, so without dynamic exclusivity checks (hot path).
  @exclusivity(unchecked) public internal(set) var startCause: StartCause?
  @exclusivity(unchecked) var tracking = StartTracking()

  @exclusivity(unchecked) public internal(set) var dependencies: [OperationNode] = []
  /// Built once an operation has many dependencies, so a large join stays O(n) to declare.
  @exclusivity(unchecked) var dependencyIndex: Set<ObjectIdentifier>?
  @exclusivity(unchecked) var dependents: [OperationNode] = []
  @exclusivity(unchecked) var unfinishedDependencies = 0
  /// Part of the current run: its dependencies and it will be started when possible.
  @exclusivity(unchecked) public internal(set) var isScheduled = false
  /// Its place in the scheduler's list of executing operations.
  @exclusivity(unchecked) var executingIndex = 0
  @exclusivity(unchecked) var finishHandlers: [(OperationNode) -> Void] = []
  /// What most operations never set (OperationNode+Extras), allocated on the first write:
  /// an operation of a large graph then takes half the memory.
  @exclusivity(unchecked) var extrasStorage: Extras?

  init(id: Int, name: String, queue: WorkQueue) {
    self.id = id
    self.name = name
    self.queue = queue
  }

  func hasDependency(_ other: OperationNode) -> Bool {
    if let dependencyIndex { return dependencyIndex.contains(ObjectIdentifier(other)) }
    return dependencies.contains { $0 === other }
  }

  /// Room for `count` more dependencies (a list given at once grows the array once).
  public func reserveDependencies(_ count: Int) {
    dependencies.reserveCapacity(dependencies.count + count)
  }

  func appendDependency(_ other: OperationNode) {
    dependencies.append(other)
    if dependencyIndex != nil {
      dependencyIndex!.insert(ObjectIdentifier(other))
    } else if dependencies.count > 16 {
      dependencyIndex = Set(dependencies.map(ObjectIdentifier.init))
    }
  }

  func removeDependency(at index: Int) {
    dependencyIndex?.remove(ObjectIdentifier(dependencies[index]))
    dependencies.remove(at: index)
  }

  public var isFinished: Bool { state == .finished }
  public var succeeded: Bool { outcome == .succeeded }
  public var failed: Bool { outcome == .failed }
  public var skipped: Bool { outcome == .skipped }
  public var hasStarted: Bool { startTime != nil }

  /// Seconds from start to finish, once finished and if it started.
  /// Seconds it ran: from its start, or for a command queued in a cluster from the moment
  /// its job started there (the wait in the cluster's queue is not the command's time).
  public var duration: Double? {
    guard let startTime, let finishTime else { return nil }
    return finishTime - (remoteStartTime ?? startTime)
  }
}

extension OperationNode: Hashable {
  public static func == (a: OperationNode, b: OperationNode) -> Bool { a === b }
  public func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(self)) }
}
