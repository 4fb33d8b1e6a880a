// OperationNode+Extras: the fields most operations never set, kept out of every node.

extension OperationNode {
  /// The fields behind the properties below (nil for an operation that set none of them).
  final class Extras {
    @exclusivity(unchecked) var desc: String? = nil
    @exclusivity(unchecked) var retry: RetryPolicy? = nil
    @exclusivity(unchecked) var conditions: [any OperationCondition] = []
    @exclusivity(unchecked) var resources: [String] = []
    @exclusivity(unchecked) var producedBy: [OperationNode: String] = [:]
    @exclusivity(unchecked) var children: [OperationNode] = []
    @exclusivity(unchecked) var backgroundGrace: Double? = nil
    @exclusivity(unchecked) var observers: [any OperationObserver] = []
    @exclusivity(unchecked) var activities: [String] = []
    @exclusivity(unchecked) var timeout: Double? = nil
    /// `timeout(seconds, { cancel = true })`: seconds after which an attempt is cancelled.
    @exclusivity(unchecked) var cancelTimeout: Double? = nil
    /// The running attempt's timeouts: the one that fails it, and the one that cancels it.
    @exclusivity(unchecked) var failTimer = AttemptTimer()
    @exclusivity(unchecked) var cancelTimer = AttemptTimer()
    /// What it runs after its body stopped for a failure, a cancel or a timeout.
    @exclusivity(unchecked) var cleanup: (any OperationCleanup)? = nil
    @exclusivity(unchecked) var qos: QualityOfService? = nil
    @exclusivity(unchecked) var hostData: AnyObject? = nil
    @exclusivity(unchecked) var outputObserver: ((String) -> Void)? = nil
    @exclusivity(unchecked) var lastShownProgress: ProgressNode? = nil
    @exclusivity(unchecked) var traceback: String? = nil
    @exclusivity(unchecked) var commandResult: CommandResult? = nil
    @exclusivity(unchecked) var remoteState: RemoteState? = nil
    @exclusivity(unchecked) var remoteStartTime: Double? = nil
    @exclusivity(unchecked) var firstStartTime: Double? = nil
    @exclusivity(unchecked) var unresolvedNames: [(name: String, place: String?)] = []
    @exclusivity(unchecked) var output = OutputTail()
    @exclusivity(unchecked) var finishHandlers: [(OperationNode) -> Void] = []
    @exclusivity(unchecked) var dependencyIndex: Set<ObjectIdentifier>? = nil
    @exclusivity(unchecked) weak var group: OperationNode? = nil
    @exclusivity(unchecked) var unfinishedChildren = 0
    @exclusivity(unchecked) var failedLeaf: OperationNode? = nil
    @exclusivity(unchecked) var origin: (cause: StartCause, time: Double)? = nil
    @exclusivity(unchecked) var causeDetail: String? = nil
    @exclusivity(unchecked) var progress: ProgressNode? = nil
    /// Incremental runs (Memory/Freshness.swift).
    @exclusivity(unchecked) var freshness: Freshness? = nil
    @exclusivity(unchecked) var reuse: Reuse? = nil
    @exclusivity(unchecked) var why: String? = nil
    /// `interactive = true` (Scheduler+Terminal).
    @exclusivity(unchecked) var interactive = false

    /// A cluster job was queued or started for it (read in place: `op.remoteState != nil`
    /// copied the state out and destroyed it through the runtime's generic code).
    var isRemote: Bool { if case .some = remoteState { true } else { false } }
    /// A producer, a group or a condition's dependency may explain its start (read in place).
    var hasStartOrigin: Bool {
      if case .some = origin { return true }
      return !producedBy.isEmpty
    }
  }

  /// The extras, allocated on first use.
  var extras: Extras {
    if let extrasStorage { return extrasStorage }
    let made = Extras()
    extrasStorage = made
    return made
  }

  /// `interactive = true`: it runs alone, its commands with the terminal (`Scheduler.makeInteractive`).
  public var interactive: Bool { extrasStorage?.interactive ?? false }

  /// `desc = "…"`: what it is for, as `taskrun --list` shows it.
  public var desc: String? {
    get { extrasStorage?.desc }
    set { if extrasStorage != nil || newValue != nil { extras.desc = newValue } }
  }
  /// Tries again after a failure (not after a cancellation).
  public var retry: RetryPolicy? {
    get { extrasStorage?.retry }
    set { if extrasStorage != nil || newValue != nil { extras.retry = newValue } }
  }
  /// Evaluated in order after its dependencies finish; the first that does not hold decides.
  public internal(set) var conditions: [any OperationCondition] {
    get { extrasStorage?.conditions ?? [] }
    _modify { yield &extras.conditions }
  }
  /// Resource categories it takes one unit of while it executes (mutex, resource).
  public internal(set) var resources: [String] {
    get { extrasStorage?.resources ?? [] }
    _modify { yield &extras.resources }
  }
  /// Dependencies its conditions produced, and which condition produced each.
  var producedBy: [OperationNode: String] {
    get { extrasStorage?.producedBy ?? [:] }
    _modify { yield &extras.producedBy }
  }
  public internal(set) var children: [OperationNode] {
    get { extrasStorage?.children ?? [] }
    _modify { yield &extras.children }
  }
  /// On the first interrupt, a running operation with a grace keeps running up to that many
  /// seconds (`background(grace)`); a second interrupt stops it.
  public var backgroundGrace: Double? {
    get { extrasStorage?.backgroundGrace }
    set { if extrasStorage != nil || newValue != nil { extras.backgroundGrace = newValue } }
  }
  /// Told when it starts, produces an operation and finishes.
  public var observers: [any OperationObserver] {
    get { extrasStorage?.observers ?? [] }
    _modify { yield &extras.observers }
  }
  /// Activity indicators it counts in while it executes (`activity "network"`).
  public var activities: [String] {
    get { extrasStorage?.activities ?? [] }
    _modify { yield &extras.activities }
  }
  /// Seconds it may execute before it is cancelled and fails with a timeout error.
  public var timeout: Double? {
    get { extrasStorage?.timeout }
    set { if extrasStorage != nil || newValue != nil { extras.timeout = newValue } }
  }
  /// `timeout(seconds, { cancel = true })`: seconds each attempt may execute before it is
  /// cancelled (not failed, and not tried again); apart from `timeout`, which fails it.
  public var cancelTimeout: Double? {
    get { extrasStorage?.cancelTimeout }
    set { if extrasStorage != nil || newValue != nil { extras.cancelTimeout = newValue } }
  }
  /// `qos = "utility"`: its commands' CPU and I/O niceness (nil: as taskrun's).
  public var qos: QualityOfService? {
    get { extrasStorage?.qos }
    set { if extrasStorage != nil || newValue != nil { extras.qos = newValue } }
  }
  /// Runs after its body stopped for a failure, a cancel or a timeout (Scheduler+Cleanup).
  public var cleanup: (any OperationCleanup)? {
    get { extrasStorage?.cleanup }
    set { if extrasStorage != nil || newValue != nil { extras.cleanup = newValue } }
  }
  /// Free-form attachment for the host (the Lua host keeps its result reference here).
  public var hostData: AnyObject? {
    get { extrasStorage?.hostData }
    set { if extrasStorage != nil || newValue != nil { extras.hostData = newValue } }
  }
  /// Called with the operation's output as whole lines (the Lua host parses `progress = pattern`).
  public var outputObserver: ((String) -> Void)? {
    get { extrasStorage?.outputObserver }
    set { if extrasStorage != nil || newValue != nil { extras.outputObserver = newValue } }
  }
  /// The node whose units and words the last progress event showed: once the operation's
  /// progress is complete, its events show that node complete (see OperationProgress.swift).
  var lastShownProgress: ProgressNode? {
    get { extrasStorage?.lastShownProgress }
    set { if extrasStorage != nil || newValue != nil { extras.lastShownProgress = newValue } }
  }
  public internal(set) var traceback: String? {
    get { extrasStorage?.traceback }
    set { if extrasStorage != nil || newValue != nil { extras.traceback = newValue } }
  }
  public var commandResult: CommandResult? {
    get { extrasStorage?.commandResult }
    set { if extrasStorage != nil || newValue != nil { extras.commandResult = newValue } }
  }
  /// Where its command is, when it runs elsewhere (a cluster job queued or running).
  public internal(set) var remoteState: RemoteState? {
    get { extrasStorage?.remoteState }
    set { if extrasStorage != nil || newValue != nil { extras.remoteState = newValue } }
  }
  /// When its command started running in a cluster, after waiting in its queue.
  var remoteStartTime: Double? {
    get { extrasStorage?.remoteStartTime }
    set { if extrasStorage != nil || newValue != nil { extras.remoteStartTime = newValue } }
  }
  /// When its first attempt started (set when it is retried; nil: `startTime` is that).
  var firstStartTime: Double? {
    get { extrasStorage?.firstStartTime }
    set { if extrasStorage != nil || newValue != nil { extras.firstStartTime = newValue } }
  }
  /// Seconds from its first attempt's start to its finish, retries and their delays
  /// included: its share of the run's length on the critical path.
  public var durationOverAttempts: Double? {
    guard let finishTime, let start = firstStartTime ?? startTime.map({ remoteStartTime ?? $0 }) else { return nil }
    return finishTime - start
  }
  /// Combined output of its commands, kept for the failure report: the last lines.
  public var output: String { extrasStorage?.output.text ?? "" }
  /// Whether any output was kept (without decoding it).
  var hasOutput: Bool { extrasStorage.map { !$0.output.isEmpty } ?? false }
  /// How many lines of its output came before `output` and were not kept.
  public var earlierOutputLines: Int { extrasStorage?.output.droppedLines ?? 0 }
  /// Adds command output to what is kept for the failure report.
  func keepOutput(_ text: String) { extras.output.append(text) }
  /// Adds whole lines as a command wrote them (decoded when `output` is read).
  func keepOutput(bytes: [UInt8]) { extras.output.append(bytes: bytes) }
  var finishHandlers: [(OperationNode) -> Void] {
    get { extrasStorage?.finishHandlers ?? [] }
    _modify { yield &extras.finishHandlers }
  }
  /// The group it runs in, if any.
  public internal(set) var group: OperationNode? {
    get { extrasStorage?.group }
    set { if extrasStorage != nil || newValue != nil { extras.group = newValue } }
  }
  /// A group's children that have not finished.
  var unfinishedChildren: Int {
    get { extrasStorage?.unfinishedChildren ?? 0 }
    _modify { yield &extras.unfinishedChildren }
  }
  /// A failed or cancelled group's innermost operation behind it (its error names it after
  /// its child).
  var failedLeaf: OperationNode? {
    get { extrasStorage?.failedLeaf }
    set { if extrasStorage != nil || newValue != nil { extras.failedLeaf = newValue } }
  }
  /// Who produced it (or started its group) and when: a start cause that may come after
  /// its last dependency's finish.
  var origin: (cause: StartCause, time: Double)? {
    get { extrasStorage?.origin }
    set { if extrasStorage != nil || newValue != nil { extras.origin = newValue } }
  }
  /// Names given in `after` that are resolved when the run starts, each with where the
  /// script gave it (`file:line:`, if known).
  public internal(set) var unresolvedNames: [(name: String, place: String?)] {
    get { extrasStorage?.unresolvedNames ?? [] }
    _modify { yield &extras.unresolvedNames }
  }
}

/// One timeout of a running attempt (Scheduler+Timeouts): its timer, when it ends on the
/// scheduler's clock, and what was left of it when the operation was paused.
struct AttemptTimer {
  var timer: TimerID?
  var deadline = Double.nan
  var left: Double?
}
