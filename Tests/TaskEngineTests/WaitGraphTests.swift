// The path search and the wait graph as plain values: cycles through edges and waits.
import Testing

@testable import TaskEngine

@Suite struct WaitGraphTests {
  /// Nodes with edges made by hand: `edges[i]` lists the indices node i depends on.
  private func nodes(_ names: [String], _ edges: [Int: [Int]]) -> [OperationNode] {
    let queue = WorkQueue(id: 0, name: "main", maxConcurrent: 1, suspended: false)
    let ops = names.enumerated().map { OperationNode(id: $0.offset + 1, name: $0.element, queue: queue) }
    for (op, dependencies) in edges { for d in dependencies { ops[op].appendDependency(ops[d]) } }
    return ops
  }

  @Test func thePathSearchFollowsUnfinishedDependenciesAndWaits() {
    let ops = nodes(["a", "b", "c", "d"], [1: [0], 2: [1], 3: [0]])  // c -> b -> a, d -> a
    let (a, b, c, d) = (ops[0], ops[1], ops[2], ops[3])
    #expect(PathSearch.path(from: c, to: a)?.map(\.name) == ["c", "b", "a"])
    #expect(PathSearch.path(from: a, to: c) == nil, "edges are followed one way only")
    #expect(PathSearch.path(from: c, to: d) == nil)
    #expect(PathSearch.path(from: b, to: b)?.map(\.name) == ["b"])
    // a's body waits for d: the search goes on through that wait.
    #expect(PathSearch.path(from: a, to: d, waits: [a: [d]])?.map(\.name) == ["a", "d"])
    #expect(PathSearch.path(from: c, to: d, waits: [a: [d]])?.map(\.name) == ["c", "b", "a", "d"])
    b.state = .finished  // a finished dependency blocks no one
    #expect(PathSearch.path(from: c, to: a) == nil)
  }

  @Test func aWaitThatClosesACycleIsRefusedAndNotRecorded() {
    let ops = nodes(["a", "b", "c"], [2: [0]])  // c depends on a
    let (a, b, c) = (ops[0], ops[1], ops[2])
    var waits = WaitGraph()
    #expect(waits.beginWait(a, for: b) == nil)
    #expect(waits.targets(of: a) == [b])
    #expect(waits.beginWait(b, for: c)?.map(\.name) == ["b", "c", "a", "b"])
    #expect(waits.targets(of: b).isEmpty, "a refused wait is not recorded")
    #expect(waits.beginWait(a, for: a)?.map(\.name) == ["a", "a"])
    waits.endWait(a, for: b)
    #expect(waits.targets(of: a).isEmpty)
    #expect(waits.beginWait(b, for: c) == nil, "the cycle is gone with the wait")
    waits.forget(b)
    #expect(waits.targets(of: b).isEmpty, "a finished waiter waits for nothing")
  }

  /// The whole-graph walk hands over each cycle once, with the label of every hop, from the
  /// node it closes on; it stops at the first when asked to (the cycle report of late names).
  @Test func theCycleWalkHandsOverEveryCycleWithItsHops() {
    // a -> b -> c -> a, d -> e -> d, f -> a (f reaches a cycle but is on none)
    let ops = nodes(["a", "b", "c", "d", "e", "f"], [0: [1], 1: [2], 2: [0], 3: [4], 4: [3], 5: [0]])
    func labelled(_ op: OperationNode) -> [(op: OperationNode, label: String)] {
      op.dependencies.map { (op: $0, label: "\(op.name)>\($0.name)") }
    }
    var seen: [[String]] = []
    PathSearch.cycles(from: ops, next: labelled) { hops in
      seen.append(hops.map(\.label))
      return false
    }
    #expect(seen == [["a>b", "b>c", "c>a"], ["d>e", "e>d"]])
    seen = []
    PathSearch.cycles(from: ops.reversed(), next: labelled) { hops in
      seen.append(hops.map(\.from.name))
      return true
    }
    #expect(seen == [["a", "b", "c"]], "from f: the first cycle met, then it stops")
    var none = 0
    PathSearch.cycles(from: ops, next: { _ in [(op: OperationNode, label: Int)]() }) { _ in
      none += 1; return false
    }
    #expect(none == 0)
  }
}
