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

  /// Foundation's `queuePriority` as a number: the nearest level (-8, -4, 0, 4 or 8; a tie
  /// goes to the level nearer normal, so 2 is normal and 6 high); beyond ±8, the extreme.
  public init(number: Double) {
    let number = min(8, max(-8, number))  // 1e17 - 8 and 1e17 + 8 are the same Double
    let levels = Priority.allCases
    self = levels.min { a, b in
      let (da, db) = (abs(Double(a.rawValue) - number), abs(Double(b.rawValue) - number))
      return da != db ? da < db : abs(a.rawValue) < abs(b.rawValue)
    }!
  }
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
  /// What its commands ask `--sandbox` for beyond the defaults (nil: nothing more).
  var sandbox: SandboxGrant? { get }
  /// The operation was paused while it runs: its commands are stopped already; the body
  /// stops what else it does (a Lua body waits at its next yielding call).
  func pause(_ operation: OperationNode, scheduler: Scheduler)
  /// The operation was resumed (or is being cancelled while paused): the body goes on.
  func resume(_ operation: OperationNode, scheduler: Scheduler)
  /// What it runs, as labelled texts a fingerprint covers and `why` compares ("command",
  /// "env", "cwd"; "code" for a Lua function).
  var identity: [OperationRecord.Part] { get }
  /// Whether `identity` costs little enough to record for every attempt (a command's text);
  /// a Lua function's is made from its code, only for operations with declarations.
  var cheapIdentity: Bool { get }
  /// Whether the run store may take it as up to date without starting it (a service that
  /// no longer runs must start again).
  func mayBeReused(_ operation: OperationNode) -> Bool
}

extension OperationBody {
  public var sandbox: SandboxGrant? { nil }
  public func pause(_ operation: OperationNode, scheduler: Scheduler) {}
  public func resume(_ operation: OperationNode, scheduler: Scheduler) {}
  public var identity: [OperationRecord.Part] { [OperationRecord.Part("body", summary)] }
  public var cheapIdentity: Bool { true }
  public func mayBeReused(_ operation: OperationNode) -> Bool { true }
}

/// What an operation runs after its body stopped for a failure, a cancel or a timeout (the
/// Lua host's `cleanup = function(op, why)`). The scheduler calls `run` once per attempt
/// that ends so, and finishes the operation (or tries it again) when `done` is called;
/// `stop` ends a cleanup that ran out of its grace or was interrupted again.
public protocol OperationCleanup: AnyObject {
  func run(
    _ operation: OperationNode, why: FailureKind, message: String, scheduler: Scheduler,
    done: @escaping () -> Void)
  func stop(_ operation: OperationNode, scheduler: Scheduler, reason: String)
  /// Seconds it may take before `stop`.
  var grace: Double { get }
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
///
/// A node is 192 bytes (a 192-byte block): word-sized fields first, then one-byte ones,
/// yes/no fields as bits of one word (OperationNode+Fields), times with NaN for "not yet",
/// and what most operations never set in Extras (OperationNode+Extras). Every node of a large
/// graph is touched at least twice (declared, run), so its size is pages and cache misses.
public final class OperationNode {
  /// Declaration order; ties between equal priorities break on it.
  public let id: Int
  @exclusivity(unchecked) public internal(set) var name: String
  @exclusivity(unchecked) public var body: (any OperationBody)?
  public let queue: WorkQueue
  @exclusivity(unchecked) public var weight: Double = 1
  @exclusivity(unchecked) var startStamp = Double.nan
  @exclusivity(unchecked) var finishStamp = Double.nan
  /// When it became ready (its queue wait, for the run store; NaN: not yet).
  @exclusivity(unchecked) var readyStamp = Double.nan
  @exclusivity(unchecked) public internal(set) var attempt = 0
  /// What its first attempt started after (the kind is `causeKind`; see `startCause`).
  @exclusivity(unchecked) var causeAfter: OperationNode?
  /// Its dependency that finished last, and when it became ready (an increasing count).
  @exclusivity(unchecked) var lastDependency: OperationNode?
  @exclusivity(unchecked) var readySequence = 0
  @exclusivity(unchecked) public internal(set) var dependencies: [OperationNode] = []
  @exclusivity(unchecked) var dependents: [OperationNode] = []
  @exclusivity(unchecked) var unfinishedDependencies = 0
  /// Its place in the scheduler's list of executing operations.
  @exclusivity(unchecked) var executingIndex = 0
  /// Why it failed (a failure or a skip costs no extras).
  @exclusivity(unchecked) public internal(set) var error: String?
  /// What most operations never set (OperationNode+Extras), allocated on the first write.
  @exclusivity(unchecked) var extrasStorage: Extras?
  @exclusivity(unchecked) public var priority: Priority = .normal
  @exclusivity(unchecked) public var policy: RunPolicy = .succeeded
  @exclusivity(unchecked) public internal(set) var state: OperationState = .pending
  @exclusivity(unchecked) public internal(set) var outcome: Outcome?
  @exclusivity(unchecked) public internal(set) var errorKind: FailureKind?
  @exclusivity(unchecked) var causeKind: StartCause.Kind?
  /// The yes/no fields (OperationNode+Fields).
  @exclusivity(unchecked) var flags = Flags()

  init(id: Int, name: String, queue: WorkQueue) {
    self.id = id
    self.name = name
    self.queue = queue
  }

  func hasDependency(_ other: OperationNode) -> Bool {
    if let dependencyIndex = extrasStorage?.dependencyIndex {
      return dependencyIndex.contains(ObjectIdentifier(other))
    }
    return dependencies.contains { $0 === other }
  }

  /// Room for `count` more dependencies (a list given at once grows the array once).
  public func reserveDependencies(_ count: Int) {
    dependencies.reserveCapacity(dependencies.count + count)
  }

  func appendDependency(_ other: OperationNode) {
    dependencies.append(other)
    if extrasStorage?.dependencyIndex != nil {
      extras.dependencyIndex!.insert(ObjectIdentifier(other))
    } else if dependencies.count > 16 {
      extras.dependencyIndex = Set(dependencies.map(ObjectIdentifier.init))
    }
  }

  func removeDependency(at index: Int) {
    extrasStorage?.dependencyIndex?.remove(ObjectIdentifier(dependencies[index]))
    dependencies.remove(at: index)
  }

  public var isFinished: Bool { state == .finished }
  public var succeeded: Bool { outcome == .succeeded }
  public var failed: Bool { outcome == .failed }
  public var skipped: Bool { outcome == .skipped }
  public var hasStarted: Bool { !startStamp.isNaN }

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
