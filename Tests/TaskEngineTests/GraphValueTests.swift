// The Graph as a plain value: naming rules, edges, and which dependents a finish releases.
import Testing

@testable import TaskEngine

@Suite struct GraphValueTests {
  @Test func aChosenNameWinsOverADefaultOneWhichMovesAside() throws {
    var graph = Graph(jobs: 2)
    let first = try graph.makeOperation(name: nil, queue: nil, body: nil)
    #expect(first.name == "op1" && first.queue === graph.mainQueue && graph.mainQueue.maxConcurrent == 2)
    let chosen = try graph.makeOperation(name: "op1", queue: nil, body: nil)
    #expect(chosen.name == "op1" && first.name == "op1_2")
    #expect(graph.operation(named: "op1") === chosen && graph.operation(named: "op1_2") === first)
    #expect(throws: EngineError(.duplicateName, "an operation named 'op1' already exists")) {
      try graph.makeOperation(name: "op1", queue: nil, body: nil)
    }
    #expect(graph.operations.count == 2, "a refused name adds nothing")
    let q = try graph.makeQueue(name: "io", maxConcurrent: 1, suspended: false)
    #expect(q.id == 1 && graph.queues.map(\.name) == ["main", "io"])
    #expect(throws: EngineError(.duplicateName, "a queue named 'io' already exists")) {
      try graph.makeQueue(name: "io", maxConcurrent: 1, suspended: false)
    }
    let last = try graph.makeOperation(name: "last", queue: q, body: nil)
    graph.link(last, to: chosen)
    graph.discard(last)
    #expect(graph.operation(named: "last") == nil && graph.operations.count == 2)
    #expect(chosen.dependents.isEmpty && q.operations.isEmpty, "discarding leaves no edge behind")
    #expect(try graph.makeOperation(name: "last", queue: nil, body: nil).id == 3, "its name and id are free again")
  }

  /// A finish releases each dependent by one; a scheduled one with nothing left is evaluable.
  @Test func releasingAndUnlinkingSayWhenADependentWaitsForNothing() throws {
    var graph = Graph(jobs: 1)
    let (a, b, c) = try (
      graph.makeOperation(name: "a", queue: nil, body: nil),
      graph.makeOperation(name: "b", queue: nil, body: nil),
      graph.makeOperation(name: "c", queue: nil, body: nil)
    )
    graph.link(c, to: a)
    graph.link(c, to: b)
    #expect(c.unfinishedDependencies == 2 && a.dependents == [c])
    #expect(!graph.releaseDependent(c, of: a), "scheduled or not, b is still unfinished")
    #expect(c.lastDependency === a)
    #expect(!graph.releaseDependent(c, of: b), "c is not part of the run")
    c.isScheduled = true
    c.unfinishedDependencies = 1
    #expect(graph.releaseDependent(c, of: b) && c.lastDependency === b)
    // Unlinking an unfinished dependency of a scheduled operation can leave it evaluable.
    let d = try graph.makeOperation(name: "d", queue: nil, body: nil)
    graph.link(d, to: a)
    graph.link(d, to: b)
    d.isScheduled = true
    #expect(!graph.unlink(d, from: a) && d.unfinishedDependencies == 1)
    #expect(!graph.unlink(d, from: a), "no such edge any more")
    #expect(graph.unlink(d, from: b) && d.dependencies.isEmpty && b.dependents == [c])
    b.state = .finished
    graph.link(d, to: b)
    #expect(d.unfinishedDependencies == 0, "a finished dependency is not waited for")
    #expect(!graph.unlink(d, from: b))
    #expect(Graph.cycleText([a, b, a]) == "a -> b -> a")
  }
}
