// Deadlocks: when nothing can happen any more, why each operation that never started never will.

extension Scheduler {
  /// Records that the body of `waiter` waits for `target`. Returns the cycle
  /// (`waiter, …, waiter`) if that wait can never end, and then records nothing.
  public func beginWait(_ waiter: OperationNode, for target: OperationNode) -> [OperationNode]? {
    waits.beginWait(waiter, for: target)
  }

  public func endWait(_ waiter: OperationNode, for target: OperationNode) {
    waits.endWait(waiter, for: target)
  }

  /// When nothing can happen any more, scheduled operations that have not started never will
  /// (a suspended or zero-sized queue, a deadlock): cancel them with the reason. The reasons
  /// are all found before the first is cancelled: a cancel frees mutexes and ends groups, and
  /// a reason read afterwards named a mutex no one held any more ("waits for ", empty).
  /// Returns whether it cancelled any.
  func cancelUnstartable() -> Bool {
    let cycles = deadlocks()
    let parkedOps = Set(admission.parked.map(ObjectIdentifier.init))
    var reasons: [(op: OperationNode, reason: String)] = []
    for op in operations where op.isScheduled && !op.isFinished && op.state != .executing {
      let reason =
        cycles[ObjectIdentifier(op)].map { "never started: " + $0 }
        ?? (op.state == .ready && op.queue.isSuspended
          ? "never started: queue '\(op.queue.name)' is suspended"
          : op.state == .ready && parkedOps.contains(ObjectIdentifier(op))
            ? "never started: " + waitingForResources(op)
            : op.state == .ready
              ? "never started: queue '\(op.queue.name)' has no room"
              : "never started: its dependencies never finished")
      reasons.append((op, reason))
    }
    for (op, reason) in reasons where !op.isFinished { completely { cancel(op, reason: reason) } }
    return !reasons.isEmpty
  }

  /// What `op` waits for that has not finished, each with how a sentence names it: its
  /// dependencies (and its group, if that has not started) while pending, the holders of
  /// the mutexes and resources it is parked on, a running group's children, the operations
  /// a running body waits for.
  private func blockers(of op: OperationNode) -> [(op: OperationNode, text: String)] {
    switch op.state {
    case .finished:
      return []
    case .pending:
      var list = op.dependencies.filter { !$0.isFinished }.map { ($0, "'\($0.name)'") }
      if let group = op.group, !group.hasStarted { list.append((group, "its group '\(group.name)'")) }
      return list
    case .ready:
      guard op.parked else { return [] }
      return admission.waitingFor(op).flatMap { busy in
        busy.holders.map { ($0, "\(busy.kind) '\(busy.resource)' (held by '\($0.name)')") }
      }
    case .executing:
      let children = op.isGroup ? op.children.filter { !$0.isFinished }.map { ($0, "'\($0.name)'") } : []
      return children + waits.targets(of: op).map { ($0, "'\($0.name)'") }
    }
  }

  /// Every operation on a cycle of waiting (one cycle each), with the sentence that says it
  /// from that operation: "deadlock: 'x' waits for mutex 'm' (held by 'g'), which waits for
  /// 'c', which waits for 'x'". One depth-first walk of what waits for what: O(V + E).
  func deadlocks() -> [ObjectIdentifier: String] {
    var found: [ObjectIdentifier: String] = [:]
    let roots = operations.lazy.filter { $0.isScheduled && !$0.isFinished }
    PathSearch.cycles(from: roots, next: { blockers(of: $0).map { (op: $0.op, label: $0.text) } }) { cycle in
      let hops = cycle.map { (from: $0.from, text: $0.label) }
      for (i, hop) in hops.enumerated() where found[ObjectIdentifier(hop.from)] == nil {
        found[ObjectIdentifier(hop.from)] = sentence(Array(hops[i...] + hops[..<i]))
      }
      return false
    }
    return found
  }

  /// "deadlock: 'a' waits for X, which waits for Y, …" from the first hop's operation around
  /// the cycle; a long one is shortened as `cycleText` shortens.
  private func sentence(_ hops: [(from: OperationNode, text: String)]) -> String {
    var texts = hops.map(\.text)
    if texts.count > 12 { texts = texts.prefix(6) + ["… (\(texts.count - 9) more)"] + texts.suffix(3) }
    return "deadlock: '\(hops[0].from.name)' waits for " + texts.joined(separator: ", which waits for ")
  }
}
