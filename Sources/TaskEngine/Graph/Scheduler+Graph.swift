// Graph queries: name resolution, cycles, plan order and "why is it waiting?".
import Glibc
import HeapModule

extension Scheduler {
  /// Turns the names given in `after` into edges. An unknown name is an error with the
  /// closest names; a cycle formed by the new edges is an error naming it. Each error has
  /// the place where the script gave the name (for a cycle: a name that closes it).
  public func resolveNames(_ ops: [OperationNode]? = nil) throws {
    var touched = false
    var places: [ObjectIdentifier: [(dependency: OperationNode, place: String)]] = [:]  // of new edges
    for op in ops ?? operations where !op.unresolvedNames.isEmpty {
      let names = op.unresolvedNames
      op.unresolvedNames = []
      for (name, place) in names {
        guard let dependency = operation(named: name) else { throw unknownName(name, for: op, place: place) }
        if dependency === op {
          throw EngineError(.cycle, "dependency cycle: \(op.name) -> \(op.name)", place: place)
        }
        if op.hasDependency(dependency) { continue }
        if !op.mayStillChange {
          throw EngineError(
            .alreadyStarted, "cannot add a dependency to '\(op.name)': it already started", place: place)
        }
        graph.link(op, to: dependency)
        touched = true
        if let place { places[ObjectIdentifier(op), default: []].append((dependency, place)) }
      }
    }
    if touched, let cycle = findCycle() {
      let place = zip(cycle, cycle.dropFirst()).lazy.compactMap { op, dependency in
        places[ObjectIdentifier(op)]?.first { $0.dependency === dependency }?.place
      }.first
      throw EngineError(.cycle, "dependency cycle: " + Graph.cycleText(cycle), place: place)
    }
  }

  /// Resolves the names in `after` that a run of `ops` needs: those of `ops` and of
  /// everything they need (dependencies, children, groups), and of what the names resolved
  /// bring in, until none is left. The names of operations the run leaves out stay as they
  /// are: one of them may be misspelt, or name an operation declared later.
  public func resolveNames(neededBy ops: [OperationNode]) throws {
    var seen: Set<OperationNode> = []
    var stack = ops
    while true {
      var unresolved: [OperationNode] = []
      while let op = stack.popLast() {
        guard seen.insert(op).inserted else { continue }
        if !op.unresolvedNames.isEmpty { unresolved.append(op) }
        stack.append(contentsOf: op.dependencies)
        stack.append(contentsOf: op.children)
        if let group = op.group { stack.append(group) }
      }
      if unresolved.isEmpty { return }
      try resolveNames(unresolved)
      stack = unresolved.flatMap(\.dependencies)  // the new edges (the old ones were seen)
    }
  }

  func unknownName(_ name: String, for op: OperationNode, place: String? = nil) -> EngineError {
    let hint = suggestion(for: name, among: operations.map(\.name).filter { $0 != op.name })  // never itself
    return EngineError(
      .unknownName,
      "'\(op.name)' depends on '\(name)', but no operation has that name" + (hint.isEmpty ? "" : "; \(hint)"),
      place: place)
  }

  /// One cycle of the whole graph as `a, b, c, a` (a depends on b …), or nil. O(V + E).
  public func findCycle() -> [OperationNode]? {
    var cycle: [OperationNode]?
    PathSearch.cycles(from: operations, next: { $0.dependencies.lazy.map { (op: $0, label: ()) } }) { hops in
      cycle = hops.map(\.from) + [hops[0].from]
      return true
    }
    return cycle
  }

  /// `ops` and everything they depend on, in an order they could run one by one: dependencies
  /// first, then higher priority, then declaration order.
  public func plan(for ops: [OperationNode]) -> [OperationNode] {
    var wanted: Set<OperationNode> = []
    var stack = ops
    while let op = stack.popLast() {
      guard wanted.insert(op).inserted else { continue }
      stack.append(contentsOf: op.dependencies)
      stack.append(contentsOf: op.children)
      if let group = op.group { stack.append(group) }
    }
    // A child comes after its group has started (an implicit edge).
    func before(_ op: OperationNode) -> [OperationNode] { op.dependencies + (op.group.map { [$0] } ?? []) }
    func after(_ op: OperationNode) -> [OperationNode] { op.dependents + op.children }
    var remaining: [OperationNode: Int] = [:]
    for op in wanted { remaining[op] = before(op).filter { wanted.contains($0) }.count }
    var ready = Heap<ReadyEntry>()
    for op in wanted where remaining[op] == 0 {
      ready.insert(readyEntry(op))
    }
    var order: [OperationNode] = []
    while let entry = ready.popMax() {
      order.append(entry.operation)
      for dependent in after(entry.operation) where wanted.contains(dependent) {
        remaining[dependent]! -= 1
        if remaining[dependent] == 0 {
          ready.insert(readyEntry(dependent))
        }
      }
    }
    return order
  }

  /// A sentence saying what `op` is waiting for, or what became of it.
  /// "waits for mutex 'm' (held by 'a')": what a parked operation waits for.
  func waitingForResources(_ op: OperationNode) -> String {
    "waits for "
      + admission.waitingFor(op).map { busy in
        "\(busy.kind) '\(busy.resource)' (held by \(busy.holders.map { "'\($0.name)'" }.joined(separator: ", ")))"
      }.joined(separator: " and ")
  }

  public func explain(_ op: OperationNode) -> String {
    if op.isPaused && !op.isFinished {
      return "'\(op.name)' is paused (\(op.state == .executing ? "while executing" : "before it started")): "
        + "it goes on when its progress is resumed"
    }
    if stopping.held && !op.isFinished && op.state != .executing {
      return "'\(op.name)' waits: the run is paused (taskrun resume \(getpid()))"
    }
    switch op.state {
    case .finished:
      if op.reuse != nil, let why = op.why { return "'\(op.name)' did not run: \(why)" }
      let outcome = op.outcome!.rawValue
      return "'\(op.name)' \(outcome == "succeeded" ? "succeeded" : "finished \(outcome)")"
        + (op.error.map { ": \($0)" } ?? "") + (op.why.map { " (it ran because \($0))" } ?? "")
    case .executing:
      if op.isCancelled { return "'\(op.name)' is executing and being cancelled (\(op.error ?? "cancelled"))" }
      let targets = waits.targets(of: op)
      if !targets.isEmpty {
        return "'\(op.name)' is executing and waits for "
          + targets
          .map { "'\($0.name)' (\($0.state.rawValue))" }.joined(separator: ", ")
      }
      if let remote = op.remoteState { return "'\(op.name)' is executing: \(remote.sentence)" }
      return "'\(op.name)' is executing"
    case .ready:
      if admission.parked.contains(op) { return "'\(op.name)' is ready, but " + waitingForResources(op) }
      let queue = op.queue
      if queue.isSuspended { return "'\(op.name)' is ready, but queue '\(queue.name)' is suspended" }
      let running = queue.operations.filter { $0.state == .executing }.map { "'\($0.name)'" }
      return "'\(op.name)' is ready, but queue '\(queue.name)' is full (\(queue.running) of "
        + "\(queue.maxConcurrent) running: \(running.joined(separator: ", ")))"
    case .pending:
      if !op.unresolvedNames.isEmpty {
        return "'\(op.name)' waits for the run to start to resolve "
          + op.unresolvedNames.map { "'\($0.name)'" }.joined(separator: ", ")
      }
      if let group = op.group, !group.hasStarted {
        return "'\(op.name)' waits for its group '\(group.name)' to start"
      }
      if !op.isScheduled { return "'\(op.name)' is not scheduled: nothing has asked to run it yet" }
      if op.evaluatingConditions {
        return "'\(op.name)' is evaluating its conditions: "
          + op.conditions.map { "'\($0.name)'" }.joined(separator: ", ")
      }
      let unfinished = op.dependencies.filter { !$0.isFinished }
      if !unfinished.isEmpty {
        let list = unfinished.map { "'\($0.name)' (\($0.state.rawValue))" }.joined(separator: ", ")
        return
          "'\(op.name)' waits for \(unfinished.count) \(unfinished.count == 1 ? "dependency" : "dependencies"): \(list)"
      }
      return "'\(op.name)' is about to be evaluated"
    }
  }
}
