// The ready set pops what a priority queue would, however operations become ready.
import Foundation
import TestSupport
import Testing

@testable import TaskEngine

@Suite struct ReadySetTests {
  @Test func popsTheHighestPriorityThenTheEarliestDeclaredWhateverTheInsertOrder() {
    var rng = SplitMix64.seeded(by: "TASKRUN_READYSET_SEED", for: "ReadySetTests")
    let seed = rng.state
    let queue = WorkQueue(id: 0, name: "main", maxConcurrent: -1, suspended: false)
    for round in 0..<200 {
      let count = round == 0 ? 5_000 : Int.random(in: 1...300, using: &rng)  // round 0: the line compacts
      let nodes = (1...count).map { OperationNode(id: $0, name: "op\($0)", queue: queue) }
      // Mostly in declaration order at one priority (the common case), with stretches of
      // other priorities, reversed runs and pops in between.
      var order = Array(nodes.indices)
      if Bool.random(using: &rng) { order.shuffle(using: &rng) }
      if Int.random(in: 0...3, using: &rng) == 0 { order.reverse() }
      let priorities = nodes.map { _ in
        Int.random(in: 0...4, using: &rng) == 0 ? Int.random(in: -8...8, using: &rng) : 0
      }
      var set = ReadySet(), model: [ReadyEntry] = []
      func pop() {
        let expected = model.max()
        if let expected { model.removeAll { $0 == expected } }
        let got = set.popMax()
        #expect(got?.id == expected?.id, "seed \(seed), round \(round)")
        #expect(set.count == model.count && set.isEmpty == model.isEmpty)
      }
      for index in order {
        let entry = ReadyEntry(priority: priorities[index], id: nodes[index].id, operation: nodes[index])
        set.insert(entry)
        model.append(entry)
        if Int.random(in: 0...2, using: &rng) == 0 { pop() }
      }
      while !model.isEmpty { pop() }
      #expect(set.popMax() == nil)
      withExtendedLifetime(nodes) {}
    }
  }
}
