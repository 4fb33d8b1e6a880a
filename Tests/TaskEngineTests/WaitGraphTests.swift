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
}
