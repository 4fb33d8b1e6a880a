// Scheduler: owns the graph and decides what starts when; single-threaded and event-driven.
import FoundationEssentials
import Glibc
import HeapModule
import Synchronization

/// Runs operations as their dependencies finish, within queue limits, on one thread.
/// Everything here is called from the thread that calls `run(until:)`; other threads talk to
/// it through the `inbox` only.
public final class Scheduler {
  /// Time, the inbox, timers and off-thread completions.
  public let loop: EventLoop
  /// Every running command, local or remote, with its executor.
  let commands: CommandTable
  /// The loop's clock and inbox, held here too: `clock.now` and the inbox's signal count are
  /// read at every start and finish, and reading them through `loop` cost a retain and a
  /// release each time (measured with callgrind).
  public let clock: any SchedulerClock
  public let inbox: Inbox
  /// This machine's executor.
  public var processes: ProcessRunner { commands.processes }
  /// Operations, queues, their names and edges (Graph/Graph.swift).
  @exclusivity(unchecked) var graph: Graph
  /// Without it, the first failure stops new operations from starting (running ones finish).
  @exclusivity(unchecked) public var keepGoing = false
  /// Seconds a cancelled command gets between SIGTERM and SIGKILL.
  @exclusivity(unchecked) public var killGrace = 2.0
  /// A second interrupt also kills the process's other children outside its own process
  /// group (strays a command left behind, re-parented to taskrun). taskrun owns its process;
  /// a host that runs several schedulers in one (the in-process tests do) turns it off, or
  /// one scheduler's second Ctrl-C would kill another's commands.
  public var killsStrays = true
  @exclusivity(unchecked) public var sinks: [any EventSink] = [] {
    willSet { emitHeldSuccesses() }  // to the sinks that were there when they happened
    didSet { interests = sinks.reduce([]) { $0.union($1.interests) } }
  }
  /// What the sinks read, together.
  @exclusivity(unchecked) var interests: EventInterests = []
  @exclusivity(unchecked) public private(set) var runStartTime: Double?
  /// Why nothing new starts any more (first failure without -k, or an interrupt), if so.
  @exclusivity(unchecked) public private(set) var stopReason: String?
  @exclusivity(unchecked) public private(set) var interrupts = 0
  /// Why the run was ended from inside (`os.exit`): like an interrupt, but not one.
  @exclusivity(unchecked) public private(set) var endedBy: String?
  /// Interrupted or ended: nothing new starts, not even cleanup operations.
  public var halted: Bool { interrupts > 0 || endedBy != nil }
  /// Called when the run is interrupted or ended, after the operations were cancelled (the
  /// Lua host wakes the script's top level, which waits on no operation of its own).
  public var onHalt: () -> Void = {}
  /// Interrupts of the inbox's count already handled (see `absorbSignals`).
  @exclusivity(unchecked) var signalsHandled = 0
  /// Seconds between `tick` and `runProgress` events (nil: none; the live view sets ~1/15 s).
  @exclusivity(unchecked) public var tickInterval: Double?
  /// Counts behind `runProgress`, kept as operations move.
  @exclusivity(unchecked) var counts = RunProgress()
  @exclusivity(unchecked) var scheduledWeight = 0.0, finishedWeight = 0.0
  /// Weight and seconds of the finished operations that ran (what the ETA learns from).
  @exclusivity(unchecked) var ranWeight = 0.0, ranSeconds = 0.0, cancelledWeight = 0.0
  var eta = ETAEstimator()
  @exclusivity(unchecked) var nextTick: Double?
  /// Executing operations, in no order (each knows its index: no hashing on the hot path).
  @exclusivity(unchecked) var executing: [OperationNode] = []
  /// Scheduled operations that have not finished: the run is over when it is 0.
  @exclusivity(unchecked) public internal(set) var unfinishedScheduled = 0
  /// Resources, their holders and the operations parked for them (Admission/Admission.swift).
  @exclusivity(unchecked) var admission = Admission()
  /// Executing operations per activity label.
  @exclusivity(unchecked) public private(set) var activityCounts: [String: Int] = [:]
  /// Operations whose progress changed since the last tick.
  @exclusivity(unchecked) var progressDirty: [OperationNode] = []
  /// Executing operations whose start waits for the next tick (`startsAtTick`): a count, not
  /// a list, so that a tick after many short operations touches none of them.
  @exclusivity(unchecked) var unannouncedStarts = 0
  /// Successes not yet told (`successesAtTick`): told together before the next event.
  @exclusivity(unchecked) var heldSuccesses: [Success] = []

  /// The `confirm` prompts, asked one at a time (Conditions/PromptLine.swift).
  let prompts = PromptLine()
  /// Executing operations by the operations they wait on (for deadlock detection).
  @exclusivity(unchecked) var waits = WaitGraph()
  /// Finishes whose consequences are being carried out (Scheduler+Cascade.swift).
  @exclusivity(unchecked) var cascade: [CascadeFrame] = []
  @exclusivity(unchecked) var cascading = false

  public init(clock: any SchedulerClock = MonotonicClock(), jobs: Int = 1) {
    loop = EventLoop(clock: clock)
    (self.clock, inbox) = (clock, loop.inbox)
    commands = CommandTable(loop: loop, processes: ProcessRunner(inbox: loop.inbox))
    self.graph = Graph(jobs: jobs)
    adopt(graph.mainQueue)
    processes.wantsText = { [unowned self] token in outputTextWanted(token) }
  }

  /// Has a new queue's operations' progress changes reported here.
  private func adopt(_ queue: WorkQueue) {
    queue.progressChanged = { [unowned self] op in progressDirty.append(op) }
  }

  // MARK: Building the graph

  /// A new queue; names are unique.
  public func makeQueue(name: String, maxConcurrent: Int = -1, suspended: Bool = false) throws -> WorkQueue {
    let queue = try graph.makeQueue(name: name, maxConcurrent: maxConcurrent, suspended: suspended)
    adopt(queue)
    return queue
  }

  /// A new operation; `name` must be unique (nil: "op1", "op2", … by declaration order).
  public func makeOperation(name: String? = nil, queue: WorkQueue? = nil,
                            body: (any OperationBody)? = nil) throws -> OperationNode {
    try graph.makeOperation(name: name, queue: queue, body: body)
  }

  public func operation(named name: String) -> OperationNode? { graph.operation(named: name) }

  /// Every operation, in declaration order (ids count from 1).
  public var operations: [OperationNode] {
    @inline(__always) _read { yield graph.operations }
  }

  /// Every queue, the main queue first.
  public var queues: [WorkQueue] {
    @inline(__always) _read { yield graph.queues }
  }

  public var mainQueue: WorkQueue { graph.mainQueue }

  // Other modules get these through calls: their direct reads of a field would keep the
  // exclusivity check that `@exclusivity(unchecked)` removes only inside this module.

  /// The operation with id `id` (ids count from 1 in declaration order).
  public func operation(id: Int) -> OperationNode { graph.operations[id - 1] }

  /// The operations not scheduled yet, in declaration order.
  public func unscheduledOperations() -> [OperationNode] { operations.filter { !$0.isScheduled } }

  /// `op` runs after `dependency`. Duplicates are ignored; an edge that closes a cycle, or a
  /// dependency added to an operation that already started, is an error.
  public func addDependency(_ op: OperationNode, on dependency: OperationNode) throws {
    if !op.canTakeDependency {
      throw EngineError(.alreadyStarted,
        "cannot add a dependency to '\(op.name)': it already \(op.isFinished ? "finished" : "started")")
    }
    if op === dependency { throw EngineError(.cycle, "dependency cycle: \(op.name) -> \(op.name)") }
    if op.hasDependency(dependency) { return }
    // A new edge op -> dependency closes a cycle only if op is already upstream of dependency.
    if !op.dependents.isEmpty, let path = PathSearch.path(from: dependency, to: op) {
      throw EngineError(.cycle, "dependency cycle: " + Graph.cycleText([op] + path))
    }
    graph.link(op, to: dependency)
    if op.isScheduled { schedule([dependency]) }
  }

  /// A dependency by name: an edge at once if the name exists, else recorded for
  /// `resolveNames` (names may be declared later, until the run starts) with `place`, where
  /// the script gave it, for the errors it may cause then.
  public func addDependency(_ op: OperationNode, named name: String,
                            place: @autoclosure () -> String? = nil) throws {
    if let dependency = operation(named: name) { return try addDependency(op, on: dependency) }
    op.unresolvedNames.append((name, place()))
  }

  public func removeDependency(_ op: OperationNode, _ dependency: OperationNode) throws {
    if !op.mayStillChange {
      throw EngineError(.alreadyStarted, "cannot remove a dependency of '\(op.name)': it already started")
    }
    if graph.unlink(op, from: dependency) { evaluate(op) }
  }

  // MARK: Running

  /// Makes `ops` and everything they depend on part of the run; they start when they can.
  /// Names in `after` must be resolved first (`resolveNames`).
  public func schedule(_ ops: [OperationNode]) {
    schedule(ops, asChild: false)
  }

  /// `asChild`: a group is starting them; otherwise an operation inside a group that has not
  /// started stands for that group (a child runs only inside its group).
  func schedule(_ ops: [OperationNode], asChild: Bool) {
    if runStartTime == nil {
      runStartTime = clock.now
      emit(.runStart(time: 0))
    }
    var entries = EntryPoints()
    var stack = asChild ? ops : ops.map { entries.entry(for: $0) }
    // Ids, not nodes: sorting integers reads no node (a million nodes sorted by their ids
    // missed the cache on most comparisons), and the nodes are then visited in memory order.
    var newlyScheduled: [Int] = []
    while let op = stack.popLast() {
      if op.isScheduled { continue }
      op.isScheduled = true
      if !op.isFinished { unfinishedScheduled += 1 }
      newlyScheduled.append(op.id)
      if !op.isFinished && !op.isGroup {
        counts.pending += 1
        scheduledWeight += op.weight
      }
      for dependency in op.dependencies { stack.append(entries.entry(for: dependency)) }
    }
    newlyScheduled.sort()
    for id in newlyScheduled {
      let op = operations[id - 1]
      if op.unfinishedDependencies == 0 && op.state == .pending { evaluate(op) }
    }
  }

  /// Called when every dependency of a scheduled operation finished: skip, cancel or ready it.
  func evaluate(_ op: OperationNode) {
    absorbSignals()
    guard op.state == .pending, !op.isFinished else { return }
    if halted, let stopReason { return finish(op, .cancelled, error: stopReason) }
    let dependencies = op.producedBy.isEmpty ? op.dependencies : op.dependencies.filter { op.producedBy[$0] == nil }
    switch op.policy {
    case .succeeded:
      // One pass: the most telling dependency that did not succeed (failed, then cancelled,
      // then a skip carrying a failure, then any), and whether any failed or was cancelled
      // (not only the one the message names: `when = "failed"` further down sees the failure
      // through every skip).
      var bad: OperationNode?, rank = 0, upstream = false
      for dependency in dependencies where dependency.outcome != .succeeded {
        let r = dependency.outcome == .failed ? 4 : dependency.outcome == .cancelled ? 3 : dependency.upstreamFailed ? 2 : 1
        if r > rank { (bad, rank) = (dependency, r) }
        if r >= 2 { upstream = true }
      }
      if let bad {
        op.upstreamFailed = upstream
        return finish(op, .skipped, error: "dependency '\(bad.name)' \(bad.outcome?.rawValue ?? "did not succeed")")
      }
      if failConditionDependency(op) { return }
      if let stopReason { return finish(op, .cancelled, error: stopReason) }
    case .failed:
      if !dependencies.contains(where: { $0.outcome == .failed || $0.outcome == .cancelled || $0.upstreamFailed }) {
        return finish(op, .skipped, error: "no dependency failed")
      }
      if let stopReason, halted { return finish(op, .cancelled, error: stopReason) }
    case .finished:
      break
    }
    if !op.conditions.isEmpty && !op.conditionsHeld { return checkConditions(op) }
    makeReady(op)
  }

  func makeReady(_ op: OperationNode) {
    noteReady(op)
    op.state = .ready
    op.queue.ready.insert(ReadyEntry(priority: op.priority.rawValue, id: op.id, operation: op))
  }

  /// Conditions: first their produced dependencies run (the operation waits for them again),
  /// then each condition is evaluated in order; the first that does not hold decides.
  func checkConditions(_ op: OperationNode) {
    if !op.conditionsProduced {
      op.conditionsProduced = true
      for condition in op.conditions {
        guard let dependency = condition.dependency(for: op, scheduler: self) else { continue }
        op.producedBy[dependency] = condition.name
        // It is needed from now on: it starts after what let `op` be evaluated.
        if dependency.origin == nil, let cause = op.lastDependency
            .map({ StartCause(after: $0, kind: .dependency, detail: nil) }) ?? op.origin?.cause {
          dependency.origin = (cause, clock.now)
        }
        do {
          try addDependency(op, on: dependency)
        } catch {
          return finish(op, .failed, error: "condition '\(condition.name)': \(error)", kind: .condition)
        }
        schedule([dependency])
      }
      if op.unfinishedDependencies > 0 { return }  // evaluated again when they finish
    }
    if failConditionDependency(op) { return }
    op.evaluatingConditions = true
    evaluateCondition(op, 0)
  }

  /// A condition whose produced dependency did not succeed fails the operation. Returns
  /// whether it did.
  func failConditionDependency(_ op: OperationNode) -> Bool {
    guard !op.producedBy.isEmpty, let (dependency, condition) = op.producedBy.first(where: { $0.key.isFinished && $0.key.outcome != .succeeded })
    else { return false }
    finish(op, .failed, error: "condition '\(condition)': its dependency '\(dependency.name)' "
      + (dependency.outcome?.rawValue ?? "did not succeed"), kind: .condition)
    return true
  }

  func evaluateCondition(_ op: OperationNode, _ index: Int) {
    guard op.state == .pending, !op.isFinished else { return }  // cancelled meanwhile
    guard index < op.conditions.count else {
      op.evaluatingConditions = false
      op.conditionsHeld = true
      return evaluate(op)
    }
    let condition = op.conditions[index]
    var answered = false
    condition.evaluate(for: op, scheduler: self) { [unowned self] result in
      guard !answered else { return }
      answered = true
      guard op.state == .pending, !op.isFinished else { return }
      switch result {
      case .satisfied: evaluateCondition(op, index + 1)
      case .failed(let message):
        op.evaluatingConditions = false
        finish(op, .failed, error: "condition '\(condition.name)' failed: \(message)", kind: .condition)
      case .skipped(let message):
        op.evaluatingConditions = false
        finish(op, .skipped, error: "condition '\(condition.name)': \(message)", kind: .condition)
      }
    }
  }

  /// Starts ready operations while their queues have room. Returns whether any started.
  @discardableResult
  public func pump() -> Bool {
    absorbSignals()
    var started = false
    if !admission.parked.isEmpty {
      // Waiting for resources: first come, first served.
      var still: [OperationNode] = []
      for op in admission.parked where op.state == .ready {
        if op.queue.hasCapacity && acquire(op) { start(op); started = true } else { still.append(op) }
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
        guard op.state == .ready else { continue }
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

  /// Takes one unit of each of the operation's resources, all at once or none.
  @inline(__always)
  func acquire(_ op: OperationNode) -> Bool { admission.acquire(op) }

  @inline(__always)
  func release(_ op: OperationNode) { admission.release(op) }

  /// `op` executes only after every condition holds (evaluated in the order added).
  public func addCondition(_ condition: any OperationCondition, to op: OperationNode) throws {
    guard op.canTakeCondition else {
      throw EngineError(.alreadyStarted, "cannot add a condition to '\(op.name)': it already \(op.isFinished ? "finished" : "started")")
    }
    op.conditions.append(condition)
  }

  /// `op` takes one unit of resource `name` while it executes; at most `capacity` operations
  /// hold it at once (a mutex is capacity 1). A category keeps the capacity it was first given.
  public func require(resource name: String, capacity: Int, for op: OperationNode) throws {
    try admission.require(resource: name, capacity: capacity, for: op)
  }

  /// Units of each resource category (mutex: 1).
  public var resourceCapacity: [String: Int] { admission.resourceCapacity }

  func start(_ op: OperationNode) {
    op.state = .executing
    if op.attempt == 0 { recordStartCause(of: op) }
    if op.extrasStorage?.isRemote == true { (op.remoteState, op.remoteStartTime) = (nil, nil) }  // a retry: a new job
    op.attempt += 1
    let now = clock.now
    op.startTime = now
    if !op.isGroup {
      op.queue.running += 1
      counts.pending -= 1
      counts.running += 1
    }
    op.executingIndex = executing.count
    executing.append(op)
    if interests.contains(.starts) || op.isGroup && interests.contains(.startsAtTick) {
      announceStart(of: op)
    } else if interests.contains(.startsAtTick) {
      op.startUnannounced = true
      unannouncedStarts += 1
    }
    // Most operations have no activities, observers or handlers: not even an empty loop.
    if !op.activities.isEmpty { for label in op.activities { countActivity(label, by: 1) } }
    if !op.observers.isEmpty { for observer in op.observers { observer.operationDidStart(op) } }
    if let timeout = op.timeout {
      let attempt = op.attempt
      op.timeoutTimer = after(timeout) { [weak self, weak op] in
        guard let self, let op, op.attempt == attempt else { return }
        expire(op)
      }
    }
    if let body = op.body {
      body.start(op, scheduler: self)
    } else {
      finish(op, .succeeded)
    }
  }

  /// Ends an operation exactly once; later calls are ignored. A cancelled operation whose
  /// body returned normally still ends `cancelled`.
  public func finish(_ op: OperationNode, _ outcome: Outcome, error: String? = nil, traceback: String? = nil,
                     kind: FailureKind? = nil) {
    guard !op.isFinished else { return }
    if outcome == .failed, op.state == .executing, !op.isCancelled, !halted,
       let retry = op.retry, op.attempt <= retry.max {
      return tryAgain(op, retry, error: error ?? op.error ?? "failed")
    }
    var outcome = op.isCancelled && outcome == .succeeded ? .cancelled : outcome
    if op.timedOut && outcome == .cancelled { outcome = .failed }
    if let timer = op.timeoutTimer {
      cancelTimer(timer)
      op.timeoutTimer = nil
    }
    if op.state == .executing {
      if !op.isGroup {
        if op.slotYielded { op.slotYielded = false } else { op.queue.running -= 1 }
        op.queue.freedBy = op
        counts.running -= 1
      }
      removeExecuting(op)
      if !op.activities.isEmpty { for label in op.activities { countActivity(label, by: -1) } }
      release(op)
    } else if op.isScheduled && !op.isGroup {
      counts.pending -= 1
    }
    if op.isScheduled { unfinishedScheduled -= 1 }
    if op.isScheduled && !op.isGroup {
      if outcome == .failed || outcome == .cancelled { counts.failed += 1 } else { counts.done += 1 }
      if outcome == .cancelled { counts.cancelled += 1; cancelledWeight += op.weight }
      finishedWeight += op.weight
    }
    op.state = .finished
    op.outcome = outcome
    op.error = error ?? op.error
    if outcome == .failed, let error = op.error { SpillFolder.shared.keepNamed(in: error) }  // shown to the user
    switch outcome {
    case .succeeded: op.errorKind = nil
    case .failed: op.errorKind = op.timedOut ? .timeout : kind ?? .script
    case .cancelled: op.errorKind = interrupts > 0 ? .interrupted : .cancelled
    case .skipped: op.errorKind = kind ?? .dependency
    }
    op.traceback = traceback
    let now = clock.now
    op.finishTime = now
    let duration = op.duration
    if op.isScheduled && !op.isGroup, let duration { ranWeight += op.weight; ranSeconds += duration }
    waits.forget(op)
    if op.hasProgress {
      // Succeeding means complete, whatever the body left it at; its final state is reported.
      let progress = op.progress
      if outcome == .succeeded || outcome == .skipped {
        if progress.total <= 0 { progress.total = 1 }
        progress.completed = progress.total
      }
      op.progressDirty = false
      emit(.operationProgress(time: elapsed(at: now), name: op.name, progress: op.snapshotProgress()))
    }
    let told = outcome != .succeeded || interests.contains(.successes)
    if !told && interests.contains(.successesAtTick) && !op.isGroup {
      heldSuccesses.append(.init(name: op.name, duration: duration ?? 0))
    } else if told || interests.contains(.successesAtTick) {  // a group's at once, as its start
      let details = op.error == nil && op.traceback == nil && !op.hasOutput && op.errorKind == nil ? nil
        : FinishDetails(error: op.error, traceback: op.traceback, output: op.output, errorKind: op.errorKind,
                        earlierOutputLines: op.earlierOutputLines)
      emit(.operationFinish(time: elapsed(at: now), name: op.name, outcome: outcome,
                            duration: duration ?? 0, details: details))
    }
    if !op.observers.isEmpty { for observer in op.observers { observer.operationDidFinish(op) } }
    carryOut(finishOf: op)  // children, handlers, the fail-fast stop, dependents: Scheduler+Cascade
  }

  /// A body waits for other operations: its queue slot goes back meanwhile (as a group's or
  /// a retry delay's does), so what it waits for can run even at -j1.
  public func yieldSlot(_ op: OperationNode) {
    guard op.state == .executing, !op.isGroup, !op.slotYielded else { return }
    op.slotYielded = true
    op.queue.running -= 1
    op.queue.freedBy = op
  }

  /// Takes a slot again for a body that yielded one, then calls `resume` (at once if the
  /// queue has room, else when it has, before anything new starts).
  public func reclaimSlot(_ op: OperationNode, then resume: @escaping () -> Void) {
    guard op.slotYielded else { return resume() }
    if op.queue.hasCapacity && op.queue.reclaimers.isEmpty {
      op.slotYielded = false
      op.queue.running += 1
      return resume()
    }
    op.queue.reclaimers.append((op, resume))
  }

  func removeExecuting(_ op: OperationNode) {
    dropWaitingStart(of: op)  // it ended before a tick: no start for it
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
    if op.attempt == 1, let start = op.startTime { op.firstStartTime = op.remoteStartTime ?? start }
    if let timer = op.timeoutTimer {
      cancelTimer(timer)
      op.timeoutTimer = nil
    }
    if op.slotYielded { op.slotYielded = false } else { op.queue.running -= 1 }
    counts.running -= 1
    counts.pending += 1
    removeExecuting(op)
    for label in op.activities { countActivity(label, by: -1) }
    release(op)
    op.state = .pending
    op.timedOut = false
    emit(.operationRetry(time: elapsed, name: op.name, attempt: op.attempt, error: error, delay: delay))
    after(delay) { [unowned self, unowned op] in
      guard op.state == .pending, !op.isFinished, !op.isCancelled else { return }
      absorbSignals()  // an interrupt during the wait cancelled it: no next attempt
      guard !op.isFinished else { return }
      op.state = .ready
      op.queue.ready.insert(ReadyEntry(priority: op.priority.rawValue, id: op.id, operation: op))
    }
  }

  /// Cancels an operation: a pending one finishes `cancelled` at once; a running one is asked
  /// to stop and finishes when its body has stopped. Finished operations are left alone.
  public func cancel(_ op: OperationNode, reason: String = "cancelled") {
    guard !op.isFinished, !op.isCancelled else { return }
    markCancelled(op, reason: reason)
    if op.state == .executing, let body = op.body {
      body.interrupt(op, scheduler: self, reason: reason)
    } else {
      finish(op, .cancelled, error: reason)
    }
  }

  /// What `cancel` records before it stops the body (a group's interrupt marks nested groups).
  func markCancelled(_ op: OperationNode, reason: String) {
    op.isCancelled = true
    op.error = reason
  }

  /// Its timeout passed: cancel it, and it finishes `failed` with a timeout error.
  public func expire(_ op: OperationNode) {
    guard op.state == .executing, !op.timedOut else { return }
    op.timedOut = true
    op.isCancelled = false  // a timeout overrides an earlier cancel's reason
    cancel(op, reason: "timed out after \(formatSeconds(op.timeout ?? 0))")
  }

  /// Stops new operations from starting: scheduled ones that have not started are cancelled,
  /// except cleanup operations (`when = failed | finished`), which still run unless interrupted.
  public func stop(because reason: String) {
    stopReason = stopReason ?? reason
    // Operations downstream of a failure are left to be skipped when it reaches them.
    // By id, not in a Set: after a failure at the head of a chain of 1,000,000 that set hashed
    // every operation of it.
    var downstream = [Bool](repeating: false, count: halted ? 0 : operations.count + 1)
    if !halted {
      var stack = operations.filter { $0.outcome == .failed }.flatMap(\.dependents)
      while let op = stack.popLast() {
        guard !downstream[op.id] else { continue }
        downstream[op.id] = true
        stack.append(contentsOf: op.dependents)
      }
    }
    // An interrupt also ends operations waiting for their next attempt.
    for op in operations where op.isScheduled && !op.isFinished && op.state != .executing
      && (halted || (!op.hasStarted && op.policy == .succeeded && !downstream[op.id])) {
      completely { cancel(op, reason: reason) }  // its dependents skipped before they are reached
    }
  }

  /// A new run (a `run()` from a script) starts fresh after an earlier run's failure; an
  /// interrupt or `os.exit` stays in force.
  public func clearStop() {
    if !halted { stopReason = nil }
  }

  /// An interactive session survives Ctrl-C: once everything interrupted has finished, new
  /// work may start again.
  public func endInterrupt() {
    interrupts = 0
    stopReason = nil
    signalsHandled = inbox.signalsPosted.load(ordering: .sequentiallyConsistent)
    inbox.signalsHandled.store(signalsHandled, ordering: .sequentiallyConsistent)
  }

  /// Handles the interrupts the signal watcher counted since the last look. Called wherever
  /// something could start (evaluate, pump, a retry's next attempt), so that nothing starts
  /// after a Ctrl-C even while the loop has not drained the inbox (a CPU-bound body).
  public func absorbSignals() {
    let posted = inbox.signalsPosted.load(ordering: .sequentiallyConsistent)
    while signalsHandled < posted {
      signalsHandled += 1
      inbox.signalsHandled.store(signalsHandled, ordering: .sequentiallyConsistent)
      interrupt()
    }
  }

  /// Ends the run now, as `os.exit` asks: every operation that has not finished is cancelled
  /// with `reason` (running commands get SIGTERM, then SIGKILL after the grace).
  public func end(because reason: String) {
    guard endedBy == nil else { return }
    endedBy = reason
    stopReason = reason
    stop(because: reason)
    for op in operations where op.state == .executing { completely { cancel(op, reason: reason) } }
    onHalt()
  }

  /// Ctrl-C / SIGTERM: the first cancels everything; later ones also kill every command.
  public func interrupt() {
    interrupts += 1
    if interrupts == 1 {
      stopReason = "interrupted"
      if !executing.isEmpty { message("taskrun: stopping…; Ctrl-C again to kill", from: nil) }
      stop(because: "interrupted")
      emit(.runProgress(time: elapsed, progress: progressNow()))  // "stopping…" shows at once
      for op in operations where op.state == .executing {
        guard let grace = op.backgroundGrace else {
          completely { cancel(op, reason: "interrupted") }
          continue
        }
        message("taskrun: waiting up to \(formatSeconds(grace)) for '\(op.name)' to finish (Ctrl-C again to stop it)", from: nil)
        after(grace) { [unowned self, unowned op] in
          cancel(op, reason: "interrupted: its background grace of \(formatSeconds(grace)) ran out")
        }
      }
      onHalt()
    } else {
      if interrupts == 2, !executing.isEmpty { message("taskrun: killing…; Ctrl-C again to exit at once", from: nil) }
      for op in operations where op.state == .executing { completely { cancel(op, reason: "interrupted") } }
      processes.signalAll(SIGKILL)
      if killsStrays { processes.killStrays() }
    }
  }

  /// Calls `handler` once `op` has finished (at once if it has).
  public func onFinish(_ op: OperationNode, _ handler: @escaping (OperationNode) -> Void) {
    if op.isFinished { handler(op) } else { op.finishHandlers.append(handler) }
  }

  /// Adds output text to an operation's record and the event stream.
  public func record(output text: String, stream: OutputChannel, for op: OperationNode) {
    op.keepOutput(text)  // the report needs the tail: what is kept per operation is bounded
    op.outputObserver?(text)
    emit(.output(time: elapsed, name: op.name, stream: stream, text: text))
  }

  func countActivity(_ label: String, by delta: Int) {
    let count = (activityCounts[label] ?? 0) + delta
    activityCounts[label] = count
    emit(.activity(time: elapsed, label: label, count: count))
  }

  /// `producer`'s body created `produced` (NSOperation's produceOperation): its observers hear it.
  public func produced(_ produced: OperationNode, by producer: OperationNode) {
    if produced.origin == nil {
      produced.origin = (StartCause(after: producer, kind: .producer, detail: nil), clock.now)
    }
    for observer in producer.observers { observer.operation(producer, didProduce: produced) }
  }

  /// A line the script printed: to the reporters, or to stdout when there are none.
  public func message(_ text: String, from op: OperationNode?) {
    if sinks.isEmpty {
      print(text)
    } else {
      emit(.message(time: elapsed, operation: op?.name, text: text))
    }
  }

  /// Seconds since the run started.
  public var elapsed: Double { elapsed(at: clock.now) }
  func elapsed(at now: Double) -> Double { runStartTime.map { now - $0 } ?? 0 }

  /// Counts per outcome and the failures of every scheduled operation.
  public var summary: RunSummary {
    var summary = RunSummary()
    summary.interrupted = interrupts > 0
    summary.ended = endedBy
    summary.elapsed = elapsed
    // The five longest, in one pass (longest first, then declaration order).
    var slowest: [OperationNode] = []
    for op in operations {
      guard let duration = op.duration else { continue }
      if slowest.count == 5, duration <= slowest[4].duration! { continue }
      let index = slowest.firstIndex { duration > $0.duration! } ?? slowest.count
      slowest.insert(op, at: index)
      if slowest.count > 5 { slowest.removeLast() }
    }
    summary.slowest = slowest.map { .init(name: $0.name, duration: $0.duration!) }
    summary.criticalPath = criticalPath()
    for op in operations where op.isFinished {
      switch op.outcome! {
      case .succeeded: summary.succeeded += 1
      case .skipped: summary.skipped += 1
      case .failed, .cancelled:
        if op.outcome == .failed { summary.failed += 1 } else { summary.cancelled += 1 }
        summary.failures.append(.init(name: op.name, outcome: op.outcome!, error: op.error ?? "",
                                      output: op.output, kind: op.errorKind,
                                      cause: op.errorKind == .child ? op.failedLeaf?.name : nil))
      }
    }
    return summary
  }

  /// The run's progress now: operations composed by weight (a running one counts for its
  /// own progress once it reports any), with an ETA from the work in flight (ETA.swift).
  func progressNow() -> RunProgress {
    var progress = counts
    progress.stopping = interrupts > 0
    var units = finishedWeight - cancelledWeight
    var running: [(weight: Double, seconds: Double, fraction: Double?)] = []
    var runningWeight = 0.0
    let now = clock.now
    for op in executing where !op.isGroup {
      let fraction = op.hasProgress && !op.progress.isIndeterminate ? op.progress.fraction : nil
      if let fraction { units += op.weight * fraction }
      running.append((op.weight, now - (op.startTime ?? now), fraction))
      runningWeight += op.weight
    }
    progress.fraction = scheduledWeight > 0 ? min(1, units / scheduledWeight) : 0
    let slots = mainQueue.maxConcurrent > 0 ? mainQueue.maxConcurrent : max(1, running.count + counts.pending)
    progress.eta = unfinishedScheduled == 0 ? nil : eta.update(WorkInFlight(
      elapsed: elapsed(at: now), finishedWeight: ranWeight, finishedSeconds: ranSeconds,
      pendingWeight: max(0, scheduledWeight - finishedWeight - runningWeight), running: running, slots: slots))
    return progress
  }

  func announceStart(of op: OperationNode) {
    dropWaitingStart(of: op)
    emit(.operationStart(time: elapsed(at: op.startTime ?? clock.now), name: op.name, attempt: op.attempt,
                         reason: op.attempt == 1 && interests.contains(.startReasons) ? op.startCause.map(StartReason.init) : nil,
                         group: op.group?.name,
                         isGroup: op.isGroup))
  }

  private func dropWaitingStart(of op: OperationNode) {
    guard op.startUnannounced else { return }
    op.startUnannounced = false
    unannouncedStarts -= 1
  }

  /// Announces the starts that waited for this tick (of operations still executing).
  func announceWaitingStarts() {
    guard unannouncedStarts > 0 else { return }
    for op in executing where op.startUnannounced { announceStart(of: op) }
  }

  /// Emits `runProgress` and `tick` when the tick interval has passed.
  func tickIfDue() {
    guard let interval = tickInterval, runStartTime != nil else { return }
    let now = clock.now
    if let nextTick, now < nextTick { return }
    nextTick = now + interval
    announceWaitingStarts()
    let changed = progressDirty
    progressDirty.removeAll(keepingCapacity: true)
    for op in changed where op.progressDirty {
      op.progressDirty = false
      emit(.operationProgress(time: elapsed, name: op.name, progress: op.snapshotProgress()))
    }
    emit(.runProgress(time: elapsed, progress: progressNow()))
    emit(.tick(time: elapsed))
  }

  /// Starts counting a new run (the REPL's next `run()`): elapsed time, counts, weights and
  /// the ETA start from zero and `run_start` is emitted again when something is scheduled.
  /// Only when nothing scheduled is unfinished.
  public func beginNewRun() {
    guard unfinishedScheduled == 0 else { return }
    runStartTime = nil
    nextTick = nil
    counts = RunProgress()
    scheduledWeight = 0; finishedWeight = 0; ranWeight = 0; ranSeconds = 0; cancelledWeight = 0
    eta = ETAEstimator()
  }

  /// Emits the final `runProgress` and `run_finish` with the summary; call once, at the end.
  @discardableResult
  public func finishRun() -> RunSummary {
    let summary = self.summary
    emit(.runProgress(time: elapsed, progress: progressNow()))
    emit(.runFinish(time: elapsed, summary: summary))
    return summary
  }

  public func emit(_ event: RunEvent) {
    if !heldSuccesses.isEmpty { emitHeldSuccesses() }
    for sink in sinks { sink.receive(event) }
  }

  /// The successes held since the last event, as one `successes` event, before anything
  /// else is told: every event keeps its place in the order things happened.
  func emitHeldSuccesses() {
    guard !heldSuccesses.isEmpty else { return }
    let event = RunEvent.successes(time: elapsed, operations: heldSuccesses)
    heldSuccesses = []
    for sink in sinks { sink.receive(event) }
  }
}

extension Scheduler {
  /// Forgets the operation created last (its declaration failed half-way).
  public func discard(_ op: OperationNode) { graph.discard(op) }
}
