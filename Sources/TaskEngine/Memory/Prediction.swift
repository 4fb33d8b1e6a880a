// Prediction: what `-n` says a run would do: which operations would run and why, and (`--predict`) how long it would take.

import HeapModule

/// An operation of the simulation, by the time it ends.
private struct Finishing: Comparable {
  let end: Double
  let id: Int
  unowned let operation: OperationNode
  static func < (a: Finishing, b: Finishing) -> Bool { a.end != b.end ? a.end < b.end : a.id < b.id }
  static func == (a: Finishing, b: Finishing) -> Bool { a.id == b.id }
}

/// A dry run's view of the plan through the run store.
public struct Prediction {
  /// Each planned operation and why it would run (nil: it would not, being up to date).
  public var verdicts: [(operation: OperationNode, runs: Bool, why: String)] = []
  /// Seconds the run would take at the given slots, from typical durations (nil: no history).
  public var seconds: Double?
  /// The longest chain in typical seconds: the bound no number of slots goes below.
  public var criticalPath: [(name: String, seconds: Double)] = []
  /// The slots asked for (`--predict`: -j), nil when no time was asked for.
  public var slots: Int?
}

extension Scheduler {
  /// Checks each operation of `plan` (in its order) without running or recording anything:
  /// one whose upstream would make a declared output anew would run too. With `slots`, also
  /// simulates the run on that many slots of the main queue with typical durations.
  public func predict(_ plan: [OperationNode], slots: Int?) -> Prediction {
    var prediction = Prediction()
    prediction.slots = slots
    guard let memory else { return prediction }
    var runs = Set<ObjectIdentifier>()
    for op in plan {
      var verdict: RunMemory.Verdict
      if let upstream = op.dependencies.first(where: {
        runs.contains(ObjectIdentifier($0)) && !($0.freshness?.outputs.isEmpty ?? true)
      }), op.freshness != nil {
        verdict = .run("upstream '\(upstream.name)' would run")
        op.why = "upstream '\(upstream.name)' would run"
      } else if op.isGroup {
        verdict = .run("a group")
      } else if op.freshness != nil || memory.resumed != nil {
        verdict = memory.check(op)
      } else {
        verdict = .run(memory.always ? "-B: every operation runs" : "no inputs or outputs declared")
      }
      switch verdict {
      case .run(let why):
        runs.insert(ObjectIdentifier(op))
        prediction.verdicts.append((op, true, why))
      case .reuse(_, let why):
        prediction.verdicts.append((op, false, why))
      }
    }
    guard let slots, let history = memory.history else { return prediction }
    prediction.seconds = simulate(plan, running: runs, slots: max(1, slots), history: history)
    // The critical path: from the root with the longest rank, each step to its longest dependent.
    let wanted = Set(plan.map(ObjectIdentifier.init))
    func seconds(_ op: OperationNode) -> Double { runs.contains(ObjectIdentifier(op)) ? history.seconds(op) : 0 }
    var longest: [ObjectIdentifier: Double] = [:]
    for op in plan.reversed() {
      let next = op.dependents.filter { wanted.contains(ObjectIdentifier($0)) }
      longest[ObjectIdentifier(op)] = seconds(op) + (next.map { longest[ObjectIdentifier($0)] ?? 0 }.max() ?? 0)
    }
    var op = plan.filter { $0.dependencies.allSatisfy { !wanted.contains(ObjectIdentifier($0)) } }
      .max { (longest[ObjectIdentifier($0)] ?? 0) < (longest[ObjectIdentifier($1)] ?? 0) }
    while let current = op {
      prediction.criticalPath.append((current.name, seconds(current)))
      op = current.dependents.filter { wanted.contains(ObjectIdentifier($0)) }
        .max { (longest[ObjectIdentifier($0)] ?? 0) < (longest[ObjectIdentifier($1)] ?? 0) }
    }
    return prediction
  }

  /// List scheduling as the scheduler does it (priority, then longest path, then declaration
  /// order) on `slots` slots; operations that would not run take no time.
  private func simulate(_ plan: [OperationNode], running runs: Set<ObjectIdentifier>, slots: Int, history: History)
    -> Double
  {
    let wanted = Set(plan.map(ObjectIdentifier.init))
    var waiting: [ObjectIdentifier: Int] = [:]
    var ready: [OperationNode] = []  // the roots
    for op in plan {
      let n = op.dependencies.filter { wanted.contains(ObjectIdentifier($0)) }.count
      waiting[ObjectIdentifier(op)] = n
      if n == 0 { ready.append(op) }
    }
    var clock = 0.0
    var queue = Heap<ReadyEntry>()
    for op in ready { queue.insert(readyEntry(op, rank: history.rank(op))) }
    var inFlight = Heap<Finishing>()
    while !queue.isEmpty || !inFlight.isEmpty {
      while inFlight.count < slots, let entry = queue.popMax() {
        let op = entry.operation
        let seconds = runs.contains(ObjectIdentifier(op)) ? history.seconds(op) : 0
        inFlight.insert(Finishing(end: clock + seconds, id: op.id, operation: op))
      }
      guard let next = inFlight.popMin() else { break }
      clock = max(clock, next.end)
      for dependent in next.operation.dependents where wanted.contains(ObjectIdentifier(dependent)) {
        waiting[ObjectIdentifier(dependent), default: 1] -= 1
        if waiting[ObjectIdentifier(dependent)] == 0 {
          queue.insert(readyEntry(dependent, rank: history.rank(dependent)))
        }
      }
    }
    return clock
  }
}
