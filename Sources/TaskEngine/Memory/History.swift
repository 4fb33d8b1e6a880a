// History: typical durations from the run store as the ETA's weights and the schedule's critical path.

/// What the store's durations say about this run: each operation's typical (median) seconds,
/// which become its weight when it has none of its own (the ETA is right from the first
/// second), and its longest path to the end of the run in those seconds, which orders ready
/// operations of equal priority (the critical path runs first).
final class History {
  unowned let memory: RunMemory
  /// Ranks by operation id, made on first use from the whole graph.
  private var ranks: [Int: Double]?
  /// Seconds assumed for an operation with no history: the median of the known ones (made
  /// on first use).
  private(set) lazy var unknown: Double = {
    let typical = memory.durations.keys.compactMap { memory.typicalDuration(of: $0) }.sorted()
    return typical.isEmpty ? 1 : max(0.001, typical[typical.count / 2])
  }()

  /// Nil when no operation has a typical time worth ordering by (10 ms and more).
  init?(_ memory: RunMemory) {
    guard memory.durations.values.contains(where: { ($0.max() ?? 0) >= RunMemory.timedDuration }) else { return nil }
    self.memory = memory
  }

  /// Typical seconds of `op` (groups take none of their own).
  func seconds(_ op: OperationNode) -> Double {
    op.isGroup ? 0 : memory.typicalDuration(of: op.name).map { max(0.001, $0) } ?? unknown
  }

  /// An operation that left its weight at 1 (the default) weighs its typical seconds.
  func weigh(_ op: OperationNode) {
    if op.weight == 1, !op.isGroup { op.weight = seconds(op) }
  }

  /// Its longest path to the end of the run, itself included, in typical seconds.
  func rank(_ op: OperationNode) -> Double {
    if op.dependents.isEmpty && op.children.isEmpty { return seconds(op) }  // most operations: no walk, no entry
    if ranks == nil { ranks = [:] }
    if let known = ranks![op.id] { return known }
    // Depth first over dependents (and a group's children), iteratively: a chain of
    // 1,000,000 operations must not overflow the stack.
    var stack: [(OperationNode, Bool)] = [(op, false)]
    while let (node, expanded) = stack.popLast() {
      if ranks![node.id] != nil { continue }
      let after = node.dependents + node.children
      if expanded {
        var longest = 0.0
        for next in after { longest = max(longest, ranks![next.id] ?? 0) }
        ranks![node.id] = seconds(node) + longest
        continue
      }
      stack.append((node, true))
      for next in after where ranks![next.id] == nil { stack.append((next, false)) }
    }
    return ranks![op.id] ?? seconds(op)
  }

  /// Forget the ranks (the graph changed: a new run in the REPL).
  func reset() { ranks = nil }
}
