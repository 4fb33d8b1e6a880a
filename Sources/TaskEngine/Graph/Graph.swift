// Graph: the operations and queues of a run, their names, and the edges between them.

/// What the script declared: every operation (in declaration order: ids count from 1), every
/// queue (the main queue first), the names of both, and the dependency edges kept on the nodes.
/// A value: it changes its own fields and the nodes' edges, and never calls out (a queue's
/// progress observer, a node's evaluation: the scheduler does those with what it returns).
struct Graph {
  private(set) var operations: [OperationNode] = []
  private(set) var queues: [WorkQueue] = []
  /// The names of the queues made after the main one: a new queue's name is checked without a
  /// scan. The main queue's name is not in it: a script that makes no queue then builds no
  /// dictionary of strings at start-up (its first insertion cost a quarter million instructions).
  private var queueNames: Set<String> = []
  private var names = NameIndex()

  /// The queue operations go to unless they name another: queue 0.
  let mainQueue: WorkQueue

  init(jobs: Int) {
    mainQueue = WorkQueue(id: 0, name: "main", maxConcurrent: jobs, suspended: false)
    queues.append(mainQueue)
  }

  // MARK: Naming

  /// A new queue; names are unique.
  mutating func makeQueue(name: String, maxConcurrent: Int, suspended: Bool) throws -> WorkQueue {
    if name == mainQueue.name || queueNames.contains(name) {
      throw EngineError(.duplicateName, "a queue named '\(name)' already exists")
    }
    let queue = WorkQueue(id: queues.count, name: name, maxConcurrent: maxConcurrent, suspended: suspended)
    queueNames.insert(name)
    queues.append(queue)
    return queue
  }

  /// A new operation; `name` must be unique (nil: "op1", "op2", … by declaration order).
  mutating func makeOperation(name: String?, queue: WorkQueue?, body: (any OperationBody)?) throws -> OperationNode {
    let id = operations.count + 1
    var finalName = name ?? "op\(id)"
    if name == nil {  // a default name never takes one the script chose (op2 declared before)
      var k = 1
      while names.id(of: finalName, in: operations) != nil { k += 1; finalName = "op\(id)_\(k)" }
    }
    let op = OperationNode(id: id, name: finalName, queue: queue ?? mainQueue)
    op.hasDefaultName = name == nil
    operations.append(op)  // the index reads names from the list
    if let holderID = names.insert(finalName, id: id, in: operations) {
      let holder = operations[holderID - 1]
      guard holder.hasDefaultName else {
        operations.removeLast()
        throw EngineError(.duplicateName, "an operation named '\(finalName)' already exists")
      }
      // ...nor one it chooses later: the unnamed operation moves aside.
      var k = 1, moved = finalName
      while names.id(of: moved, in: operations) != nil { k += 1; moved = "\(finalName)_\(k)" }
      names.replace(finalName, with: id, in: operations)
      holder.name = moved
      _ = names.insert(moved, id: holderID, in: operations)
    }
    op.body = body
    op.queue.operations.append(op)
    return op
  }

  func operation(named name: String) -> OperationNode? {
    names.id(of: name, in: operations).map { operations[$0 - 1] }
  }

  /// Forgets the operation created last (its declaration failed half-way).
  mutating func discard(_ op: OperationNode) {
    guard operations.last === op, !op.isScheduled else { return }
    names.remove(op.name, in: operations)
    operations.removeLast()
    op.queue.operations.removeAll { $0 === op }
    for dependency in op.dependencies { dependency.dependents.removeAll { $0 === op } }
  }

  // MARK: Edges

  /// The edge itself, with no checks: `op` waits for `dependency` (if it has not finished).
  @inline(__always)
  func link(_ op: OperationNode, to dependency: OperationNode) {
    op.appendDependency(dependency)
    if dependency.dependents.isEmpty { dependency.dependents.reserveCapacity(4) }  // grows once, not at 1, 2, 4
    dependency.dependents.append(op)
    if !dependency.isFinished { op.unfinishedDependencies += 1 }
  }

  /// Removes the edge `op` → `dependency` if there is one. Returns whether `op`, scheduled,
  /// waits for nothing any more (it is to be evaluated now).
  func unlink(_ op: OperationNode, from dependency: OperationNode) -> Bool {
    guard let index = op.dependencies.firstIndex(of: dependency) else { return false }
    op.removeDependency(at: index)
    dependency.dependents.removeAll { $0 === op }
    guard !dependency.isFinished else { return false }
    op.unfinishedDependencies -= 1
    return op.unfinishedDependencies == 0 && op.isScheduled
  }

  /// `dependency` finished: `dependent` waits for one dependency less. Returns whether it,
  /// scheduled, waits for none any more (it is to be evaluated now). One edge at a time: the
  /// cascade evaluates each dependent before it releases the next.
  @inline(__always)
  func releaseDependent(_ dependent: OperationNode, of dependency: OperationNode) -> Bool {
    dependent.lastDependency = dependency
    dependent.unfinishedDependencies -= 1
    return dependent.unfinishedDependencies == 0 && dependent.isScheduled
  }

  /// "a -> b -> a", shortened for a long cycle (a 200,000-operation ring prints one line).
  static func cycleText(_ cycle: [OperationNode]) -> String {
    let names = cycle.map(\.name)
    guard names.count > 12 else { return names.joined(separator: " -> ") }
    return (names.prefix(6) + ["… (\(names.count - 9) more)"] + names.suffix(3)).joined(separator: " -> ")
  }
}
