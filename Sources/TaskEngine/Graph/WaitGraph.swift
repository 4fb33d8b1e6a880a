// WaitGraph: which executing bodies wait for which operations, for deadlock errors.

/// Executing operations by the operations their bodies wait for (`wait(op)` in Lua). A value:
/// it records and answers, and never calls out. A wait that would close a cycle of waiting
/// (through waits and unfinished dependencies) is refused with that cycle.
struct WaitGraph {
  private(set) var waits: [OperationNode: Set<OperationNode>] = [:]

  /// Records that the body of `waiter` waits for `target`. Returns the cycle
  /// (`waiter, …, waiter`) if that wait can never end, and then records nothing.
  mutating func beginWait(_ waiter: OperationNode, for target: OperationNode) -> [OperationNode]? {
    if let path = PathSearch.path(from: target, to: waiter, waits: waits) { return [waiter] + path }
    waits[waiter, default: []].insert(target)
    return nil
  }

  mutating func endWait(_ waiter: OperationNode, for target: OperationNode) {
    waits[waiter]?.remove(target)
  }

  /// `op` finished: its body waits for nothing any more.
  @inline(__always)
  mutating func forget(_ op: OperationNode) {
    if !waits.isEmpty { waits[op] = nil }
  }

  /// What `op`'s body waits for now, by id (the order the reports use).
  func targets(of op: OperationNode) -> [OperationNode] {
    guard let targets = waits[op] else { return [] }
    return targets.sorted { $0.id < $1.id }
  }
}
