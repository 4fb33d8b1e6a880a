// OperationNode+Fields: the node's yes/no fields as bits, its times and its start cause, packed.

extension OperationNode {
  /// The yes/no fields of a node, one bit each.
  struct Flags: OptionSet {
    let rawValue: UInt16
    static let slotYielded = Flags(rawValue: 1 << 0)
    static let hasDefaultName = Flags(rawValue: 1 << 1)
    static let upstreamFailed = Flags(rawValue: 1 << 2)
    static let conditionsProduced = Flags(rawValue: 1 << 3)
    static let conditionsHeld = Flags(rawValue: 1 << 4)
    static let evaluatingConditions = Flags(rawValue: 1 << 5)
    static let isGroup = Flags(rawValue: 1 << 6)
    static let timedOut = Flags(rawValue: 1 << 7)
    static let hasProgress = Flags(rawValue: 1 << 8)
    static let progressDirty = Flags(rawValue: 1 << 9)
    static let isCancelled = Flags(rawValue: 1 << 10)
    static let isScheduled = Flags(rawValue: 1 << 11)
    static let parked = Flags(rawValue: 1 << 12)
    static let startUnannounced = Flags(rawValue: 1 << 13)
    static let isPaused = Flags(rawValue: 1 << 14)
    static let cleanedUp = Flags(rawValue: 1 << 15)

    mutating func set(_ flag: Flags, _ on: Bool) {
      if on { insert(flag) } else { remove(flag) }
    }
  }

  /// Its body waits for other operations and gave its queue slot back meanwhile.
  public internal(set) var slotYielded: Bool {
    get { flags.contains(.slotYielded) }
    set { flags.set(.slotYielded, newValue) }
  }
  /// Named op1, op2, … by taskrun: a name the script chooses later wins over it.
  var hasDefaultName: Bool {
    get { flags.contains(.hasDefaultName) }
    set { flags.set(.hasDefaultName, newValue) }
  }
  /// Skipped because something upstream failed (or was cancelled): `when = "failed"`
  /// downstream runs for it, as Airflow's one_failed counts upstream failures.
  public internal(set) var upstreamFailed: Bool {
    get { flags.contains(.upstreamFailed) }
    set { flags.set(.upstreamFailed, newValue) }
  }
  var conditionsProduced: Bool {
    get { flags.contains(.conditionsProduced) }
    set { flags.set(.conditionsProduced, newValue) }
  }
  var conditionsHeld: Bool {
    get { flags.contains(.conditionsHeld) }
    set { flags.set(.conditionsHeld, newValue) }
  }
  public internal(set) var evaluatingConditions: Bool {
    get { flags.contains(.evaluatingConditions) }
    set { flags.set(.evaluatingConditions, newValue) }
  }
  /// A group: it finishes when its children have.
  public internal(set) var isGroup: Bool {
    get { flags.contains(.isGroup) }
    set { flags.set(.isGroup, newValue) }
  }
  public internal(set) var timedOut: Bool {
    get { flags.contains(.timedOut) }
    set { flags.set(.timedOut, newValue) }
  }
  /// Its `progress` exists (most operations never report any).
  public private(set) var hasProgress: Bool {
    get { flags.contains(.hasProgress) }
    set { flags.set(.hasProgress, newValue) }
  }
  /// Its progress changed since the scheduler last reported it.
  var progressDirty: Bool {
    get { flags.contains(.progressDirty) }
    set { flags.set(.progressDirty, newValue) }
  }
  public internal(set) var isCancelled: Bool {
    get { flags.contains(.isCancelled) }
    set { flags.set(.isCancelled, newValue) }
  }
  /// Paused through its progress (Scheduler+Pause): it does not start, its commands are
  /// stopped, its body waits at its next yielding call and its timeout does not run.
  public internal(set) var isPaused: Bool {
    get { flags.contains(.isPaused) }
    set { flags.set(.isPaused, newValue) }
  }
  /// The cleanup of its running attempt has run (Scheduler+Cleanup).
  var cleanedUp: Bool {
    get { flags.contains(.cleanedUp) }
    set { flags.set(.cleanedUp, newValue) }
  }
  /// Part of the current run: its dependencies and it will be started when possible.
  public internal(set) var isScheduled: Bool {
    get { flags.contains(.isScheduled) }
    set { flags.set(.isScheduled, newValue) }
  }
  /// It waited for a resource after it was ready.
  var parked: Bool {
    get { flags.contains(.parked) }
    set { flags.set(.parked, newValue) }
  }
  /// Its start waits for the next tick (see `EventInterests.startsAtTick`).
  var startUnannounced: Bool {
    get { flags.contains(.startUnannounced) }
    set { flags.set(.startUnannounced, newValue) }
  }

  public internal(set) var startTime: Double? {
    get { startStamp.isNaN ? nil : startStamp }
    set { startStamp = newValue ?? .nan }
  }
  public internal(set) var finishTime: Double? {
    get { finishStamp.isNaN ? nil : finishStamp }
    set { finishStamp = newValue ?? .nan }
  }

  /// Why its first attempt started when it did (the critical path follows these). A queue's
  /// name is its own queue's; other details (a condition's, a resource's) live in the extras.
  public internal(set) var startCause: StartCause? {
    get {
      guard let causeAfter, let causeKind else { return nil }
      let detail = causeKind == .queue ? queue.name : extrasStorage?.causeDetail
      return StartCause(after: causeAfter, kind: causeKind, detail: detail)
    }
    set {
      causeAfter = newValue?.after
      causeKind = newValue?.kind
      let detail = newValue?.kind == .queue ? nil : newValue?.detail
      if extrasStorage != nil || detail != nil { extras.causeDetail = detail }
    }
  }

  /// The operation's own progress (total 1 until the body sets it). Created on first use:
  /// most operations never report any. Its changes are reported, coalesced, as events.
  public var progress: ProgressNode {
    if let node = extrasStorage?.progress { return node }
    let node = ProgressNode(total: 1)
    if outcome == .succeeded || outcome == .skipped { node.completed = 1 }  // first asked for after its end
    node.onChange = { [unowned self] _ in
      guard !progressDirty else { return }
      progressDirty = true
      queue.progressChanged?(self)
    }
    // One handle: what happened to the operation already happened to its progress, and
    // from now on cancelling, pausing or resuming the progress does it to the operation.
    node.isPausable = true
    if isCancelled || outcome == .cancelled { node.cancel() }
    if isPaused { node.pause() }
    node.control = { [unowned self] action in queue.progressControl?(self, action) }
    hasProgress = true
    extras.progress = node
    return node
  }

  func snapshotProgress() -> ProgressSnapshot {
    let (snapshot, shown) = ProgressSnapshot.ofOperation(progress, lastShown: lastShownProgress)
    lastShownProgress = shown
    return snapshot
  }
}
