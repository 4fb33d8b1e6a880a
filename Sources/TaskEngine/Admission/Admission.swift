// Admission: resources (mutexes and counted categories), who holds them, and who waits for them.

/// Which ready operations may start as far as their resources go: the capacity of each
/// category (a mutex is 1), its holders, the operations parked until one frees up, and the
/// start-cause bookkeeping that needs them (who freed each resource last, and when). A value:
/// it changes its own fields and the nodes' admission fields, and never calls out.
struct Admission {
  /// Units of each resource category (mutex: 1), and who holds them now.
  private(set) var resourceCapacity: [String: Int] = [:]
  private(set) var resourceHolders: [String: [OperationNode]] = [:]
  /// Who released each resource last, and when (a ready-sequence number): see StartCause.
  private(set) var resourceFreedBy: [String: (op: OperationNode, sequence: Int)] = [:]
  /// Counts operations becoming ready and resources being released, in order.
  private(set) var readySequence = 0
  /// Ready operations waiting for resources, first come first served.
  var parked: [OperationNode] = []

  /// `op` takes one unit of resource `name` while it executes; at most `capacity` operations
  /// hold it at once (a mutex is capacity 1). A category keeps the capacity it was first given.
  mutating func require(resource name: String, capacity: Int, for op: OperationNode) throws {
    if let known = resourceCapacity[name], known != capacity {
      throw EngineError(.invalid, "resource '\(name)' already has capacity \(known), not \(capacity)")
    }
    guard op.canTakeResource else {
      throw EngineError(.alreadyStarted, "cannot add a resource to '\(op.name)': it already started")
    }
    resourceCapacity[name] = capacity
    if !op.resources.contains(name) { op.resources.append(name) }
  }

  /// Takes one unit of each of the operation's resources, all at once or none.
  @inline(__always)
  mutating func acquire(_ op: OperationNode) -> Bool {
    guard !op.resources.isEmpty else { return true }
    return acquireAll(op)
  }

  private mutating func acquireAll(_ op: OperationNode) -> Bool {
    let needed = op.resources.filter { !heldByEnclosingGroup(op, $0) }
    for name in needed where (resourceHolders[name]?.count ?? 0) >= (resourceCapacity[name] ?? 1) {
      return false
    }
    for name in needed { resourceHolders[name, default: []].append(op) }
    return true
  }

  /// A group holding a category lets its children use it (no group/child deadlock).
  func heldByEnclosingGroup(_ op: OperationNode, _ name: String) -> Bool {
    var group = op.group
    while let g = group {
      if resourceHolders[name]?.contains(where: { $0 === g }) == true { return true }
      group = g.group
    }
    return false
  }

  /// `op` stopped executing: it holds none of its resources any more. Returns the categories
  /// it released (its own list: nothing is allocated).
  @inline(__always) @discardableResult
  mutating func release(_ op: OperationNode) -> [String] {
    guard !op.resources.isEmpty else { return [] }
    releaseAll(op)
    return op.resources
  }

  private mutating func releaseAll(_ op: OperationNode) {
    readySequence += 1
    for name in op.resources {
      resourceHolders[name]?.removeAll { $0 === op }
      resourceFreedBy[name] = (op, readySequence)
    }
  }

  /// A ready operation that could not take its resources waits for them.
  mutating func park(_ op: OperationNode) {
    op.parked = true
    parked.append(op)
  }

  /// The categories `op` cannot take now, each with its kind ("mutex" or "resource") and
  /// holders: what a parked operation waits for.
  func waitingFor(_ op: OperationNode) -> [(resource: String, kind: String, holders: [OperationNode])] {
    op.resources.compactMap { name in
      let holders = resourceHolders[name] ?? []
      guard holders.count >= (resourceCapacity[name] ?? 1) else { return nil }
      return (name, resourceCapacity[name] == 1 ? "mutex" : "resource", holders)
    }
  }

  /// Records that `op` became ready now.
  @inline(__always)
  mutating func noteReady(_ op: OperationNode) {
    readySequence += 1
    op.readySequence = readySequence
  }

  /// The resource a parked operation started after: the one of its categories freed last.
  func resourceCause(of op: OperationNode) -> StartCause? {
    let freed = op.resources.compactMap { name in resourceFreedBy[name].map { (name, $0) } }
      .max { $0.1.sequence < $1.1.sequence }
    guard let (name, release) = freed else { return nil }
    let kind = resourceCapacity[name] == 1 ? "mutex" : "resource"
    return StartCause(after: release.op, kind: .resource, detail: "\(kind) '\(name)'")
  }
}
