// StartCause: why each operation started when it did, and the critical path those reasons make.

/// The last thing an operation waited for before it started: the finish of a dependency
/// (or of a condition's dependency), the queue slot or resource another operation gave back,
/// or another operation creating it (its producer) or starting it (its group).
public struct StartCause {
  public enum Kind: String, Sendable {
    case dependency, condition, queue, resource, producer, group
  }
  public let after: OperationNode
  public let kind: Kind
  /// The queue's or resource's name, the condition's name.
  public let detail: String?

  /// How a report says it: "after 'a'", "after 'a' gave back a slot of queue 'main'", ….
  public var sentence: String {
    switch kind {
    case .dependency: "after '\(after.name)'"
    case .condition: "after '\(after.name)', the dependency of condition '\(detail ?? "?")'"
    case .queue: "when '\(after.name)' gave back a slot of queue '\(detail ?? "?")'"
    case .resource: "when '\(after.name)' released \(detail ?? "a resource")"
    case .producer: "when '\(after.name)' produced it"
    case .group: "when its group '\(after.name)' started"
    }
  }
}

extension Scheduler {
  /// Records that `op` became ready now.
  @inline(__always)
  func noteReady(_ op: OperationNode) { admission.noteReady(op) }

  /// Records why `op` starts now (its first attempt): a resource or queue slot it had to wait
  /// for after it was ready, else what made it ready (its last dependency, or its producer or
  /// group if that came later). A slot or a plain dependency, what most operations waited
  /// for, is two stores: no `StartCause` made and taken apart.
  func recordStartCause(of op: OperationNode) {
    if op.parked, let cause = admission.resourceCause(of: op) {
      op.startCause = cause
      return
    }
    if op.readySequence <= op.queue.blockedSequence, let freer = op.queue.freedBy {
      (op.causeAfter, op.causeKind) = (freer, .queue)  // the detail is the queue's name
      return
    }
    guard op.extrasStorage?.hasStartOrigin == true else {
      if let last = op.lastDependency { (op.causeAfter, op.causeKind) = (last, .dependency) }
      return
    }
    let dependency = op.lastDependency.map { last in
      let condition = op.producedBy.isEmpty ? nil : op.producedBy[last]
      return StartCause(after: last, kind: condition != nil ? .condition : .dependency, detail: condition)
    }
    guard let origin = op.origin else { op.startCause = dependency; return }
    guard let dependency else { op.startCause = origin.cause; return }
    op.startCause = (dependency.after.finishTime ?? 0) > origin.time ? dependency : origin.cause
  }

  /// The chain that set the run's length: from the (non-group) operation that finished last,
  /// back through what each one started after. Groups are walked through, not listed: what
  /// waited for a group waited for its child that finished last. So are operations that
  /// finished without starting (skipped, cancelled): the path goes on through the dependency
  /// whose finish decided them, to the failure that caused a skip. One that failed at its
  /// condition is listed (it is where the run failed), with no time of its own.
  public func criticalPath() -> [RunSummary.Timing] {
    var last: OperationNode?  // finished last; on a tie, declared first
    for op in operations where !op.isGroup && (op.startTime != nil || failedUnstarted(op)) {
      guard let finish = op.finishTime else { continue }
      if let last, finish <= last.finishTime! { continue }
      last = op
    }
    guard var node = last else { return [] }
    var path: [OperationNode] = []
    // Each step goes to something that happened before the step's start or finish (a finish,
    // a group's start, a producer's run), so the walk cannot loop; the bound only makes sure.
    for _ in 0...operations.count {
      let started = node.startTime != nil
      let cause =
        started
        ? node.startCause
        : node.lastDependency.map { StartCause(after: $0, kind: .dependency, detail: nil) } ?? node.origin?.cause
      if !node.isGroup && (started || failedUnstarted(node)) { path.append(node) }
      guard var next = cause?.after else { break }
      // A group ended when its last child did: the path goes on through that child.
      while cause?.kind != .group, next.isGroup,
        let last = next.children.filter({ $0.finishTime != nil && $0.startTime != nil })
          .max(by: { ($0.finishTime!, -$0.id) < ($1.finishTime!, -$1.id) })
      {
        next = last
      }
      node = next
    }
    return path.reversed().map {
      .init(name: $0.name, duration: $0.durationOverAttempts ?? 0, reason: $0.startCause.map(StartReason.init))
    }
  }

  /// Failed without starting: at a condition (or its produced dependency).
  private func failedUnstarted(_ op: OperationNode) -> Bool { op.outcome == .failed && op.startTime == nil }
}
