// Scheduler: the coordinator: decides what starts when, over parts that own their state.
import FoundationEssentials
import Glibc
import Synchronization

/// Runs operations as their dependencies finish, within queue limits, on one thread.
/// Everything here is called from the thread that calls `run(until:)`; other threads talk to
/// it through the `inbox` only. Each concern's state lives in a part of its own (the graph,
/// admission, the ledger, the stop state, the wait graph, the loop, the command table, the
/// announcer); this class holds the parts and sequences the calls between them.
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
  /// Resources, their holders and the operations parked for them (Admission/Admission.swift).
  @exclusivity(unchecked) var admission = Admission()
  /// Executing operations by the operations they wait on (for deadlock detection).
  @exclusivity(unchecked) var waits = WaitGraph()
  /// The `confirm` prompts, asked one at a time (Conditions/PromptLine.swift).
  let prompts = PromptLine()
  /// The engine's only maker of events: sinks, interests and what waits for the next tick.
  let announcer = Announcer()
  /// Counts, weights, activities and the ETA of the run.
  @exclusivity(unchecked) var ledger = RunLedger()
  /// Why nothing new starts (a failure, an interrupt, `os.exit`).
  @exclusivity(unchecked) var stopping = StopState()
  /// Executing operations, in no order (each knows its index: no hashing on the hot path).
  @exclusivity(unchecked) var executing: [OperationNode] = []
  /// Interactive operations: who has the terminal, who waits for it (Scheduler+Terminal.swift).
  @exclusivity(unchecked) var terminal = TerminalTurn()
  /// Finishes whose consequences are being carried out (Scheduler+Cascade.swift).
  @exclusivity(unchecked) var cascade = Cascade()
  /// What the command line chose for the run (-k, the kill grace, strays).
  @exclusivity(unchecked) var settings = RunSettings()
  /// The run store's memory: up-to-date checks, attempts, history (nil: `--no-store`, tests).
  @exclusivity(unchecked) public var memory: RunMemory? {
    didSet {
      announcer.usualDuration =
        memory?.history == nil ? nil : { [unowned self] op in memory?.slowDuration(of: op.name) }
    }
  }
  /// The processes of `service = true` operations (`-w` gives every cycle's scheduler the same).
  public var services = ServiceKeeper()
  /// Called when the run is interrupted or ended, after the operations were cancelled (the
  /// Lua host wakes the script's top level, which waits on no operation of its own).
  public var onHalt: () -> Void = {}

  /// Without it, the first failure stops new operations from starting (running ones finish).
  public var keepGoing: Bool {
    @inline(__always) get { settings.keepGoing }
    set { settings.keepGoing = newValue }
  }
  /// Seconds a cancelled command gets between SIGTERM and SIGKILL.
  public var killGrace: Double {
    @inline(__always) get { settings.killGrace }
    set { settings.killGrace = newValue }
  }
  /// A second interrupt also kills the process's other children outside its own process
  /// group (strays a command left behind, re-parented to taskrun). taskrun owns its process;
  /// a host that runs several schedulers in one (the in-process tests do) turns it off, or
  /// one scheduler's second Ctrl-C would kill another's commands.
  public var killsStrays: Bool {
    @inline(__always) get { settings.killsStrays }
    set { settings.killsStrays = newValue }
  }

  public init(clock: any SchedulerClock = MonotonicClock(), jobs: Int = 1) {
    loop = EventLoop(clock: clock)
    (self.clock, inbox) = (clock, loop.inbox)
    commands = CommandTable(loop: loop, processes: ProcessRunner(inbox: loop.inbox))
    self.graph = Graph(jobs: jobs)
    adopt(graph.mainQueue)
    processes.wantsText = { [unowned self] token in outputTextWanted(token) }
    announcer.causeOf = { [unowned self] op in cause(of: op) }
  }

  /// Has a new queue's operations' progress changes reported here.
  private func adopt(_ queue: WorkQueue) {
    queue.progressChanged = { [announcer] op in announcer.progressChanged(op) }
    queue.progressControl = { [unowned self] op, action in control(op, action) }
  }

  // MARK: Building the graph

  /// A new queue; names are unique.
  public func makeQueue(name: String, maxConcurrent: Int = -1, suspended: Bool = false) throws -> WorkQueue {
    let queue = try graph.makeQueue(name: name, maxConcurrent: maxConcurrent, suspended: suspended)
    adopt(queue)
    return queue
  }

  /// A new operation; `name` must be unique (nil: "op1", "op2", … by declaration order).
  public func makeOperation(
    name: String? = nil, queue: WorkQueue? = nil,
    body: (any OperationBody)? = nil
  ) throws -> OperationNode {
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
      throw EngineError(
        .alreadyStarted,
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
  public func addDependency(
    _ op: OperationNode, named name: String,
    place: @autoclosure () -> String? = nil
  ) throws {
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
    if ledger.runStartTime == nil, ledger.begin(at: clock.now) { announcer.runStarted() }
    var entries = EntryPoints()
    var stack = asChild ? ops : ops.map { entries.entry(for: $0) }
    // Ids, not nodes: sorting integers reads no node (a million nodes sorted by their ids
    // missed the cache on most comparisons), and the nodes are then visited in memory order.
    var newlyScheduled: [Int] = []
    while let op = stack.popLast() {
      if op.isScheduled { continue }
      op.isScheduled = true
      if !op.isFinished {
        if let history = memory?.history { history.weigh(op) }
        ledger.scheduled(op)
      }
      newlyScheduled.append(op.id)
      for dependency in op.dependencies { stack.append(entries.entry(for: dependency)) }
    }
    newlyScheduled.sort()
    for id in newlyScheduled {
      let op = operations[id - 1]
      if op.unfinishedDependencies == 0 && op.state == .pending { evaluate(op) }
    }
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
        if dependency.origin == nil,
          let cause = op.lastDependency
            .map({ StartCause(after: $0, kind: .dependency, detail: nil) }) ?? op.origin?.cause
        {
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
    guard !op.producedBy.isEmpty,
      let (dependency, condition) = op.producedBy.first(where: { $0.key.isFinished && $0.key.outcome != .succeeded })
    else { return false }
    finish(
      op, .failed,
      error: "condition '\(condition)': its dependency '\(dependency.name)' "
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

  /// Takes one unit of each of the operation's resources, all at once or none.
  @inline(__always)
  func acquire(_ op: OperationNode) -> Bool { admission.acquire(op) }

  @inline(__always)
  func release(_ op: OperationNode) { admission.release(op) }

  /// `op` executes only after every condition holds (evaluated in the order added).
  public func addCondition(_ condition: any OperationCondition, to op: OperationNode) throws {
    guard op.canTakeCondition else {
      throw EngineError(
        .alreadyStarted, "cannot add a condition to '\(op.name)': it already \(op.isFinished ? "finished" : "started")")
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

  /// Calls `handler` once `op` has finished (at once if it has).
  public func onFinish(_ op: OperationNode, _ handler: @escaping (OperationNode) -> Void) {
    if op.isFinished { handler(op) } else { op.finishHandlers.append(handler) }
  }

  /// `producer`'s body created `produced` (NSOperation's produceOperation): its observers hear it.
  public func produced(_ produced: OperationNode, by producer: OperationNode) {
    if produced.origin == nil {
      produced.origin = (StartCause(after: producer, kind: .producer, detail: nil), clock.now)
    }
    for observer in producer.observers { observer.operation(producer, didProduce: produced) }
  }
}

extension Scheduler {
  /// Forgets the operation created last (its declaration failed half-way).
  public func discard(_ op: OperationNode) { graph.discard(op) }
}
