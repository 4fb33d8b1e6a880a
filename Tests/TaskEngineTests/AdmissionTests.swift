import TestSupport
// Admission as a plain value: resources are never over-held, and release says what it freed.
import Testing

@testable import TaskEngine

@Suite struct AdmissionTests {
  private let queue = WorkQueue(id: 0, name: "main", maxConcurrent: 1, suspended: false)
  private func node(_ id: Int) -> OperationNode { OperationNode(id: id, name: "op\(id)", queue: queue) }

  /// Random operations take and give back random sets of three categories (capacities 1-3):
  /// no category ever has more holders than its capacity, an acquire takes all or nothing,
  /// and a release frees exactly the operation's categories.
  @Test func holdersNeverExceedCapacity() throws {
    var rng = SplitMix64.seeded(by: "TASKRUN_ADMISSION_SEED", for: "AdmissionTests")
    let seed = rng.state
    var admission = Admission()
    let capacity = ["m": 1, "r2": 2, "r3": 3]
    let ops = (1...12).map(node)
    for op in ops {
      for (name, units) in capacity.sorted(by: { $0.key < $1.key }) where rng.chance(0.5) {
        try admission.require(resource: name, capacity: units, for: op)
      }
    }
    var holding: Set<OperationNode> = []
    for step in 0..<2_000 {
      let op = rng.pick(ops)
      if holding.contains(op) {
        let freed = admission.release(op)
        #expect(freed == op.resources, "seed \(seed), step \(step)")
        holding.remove(op)
      } else {
        let before = admission.resourceHolders.mapValues(\.count)
        // It can take them exactly when every one of its categories has room.
        let fits = op.resources.allSatisfy { (admission.resourceHolders[$0]?.count ?? 0) < capacity[$0]! }
        let took = admission.acquire(op)
        #expect(took == fits, "seed \(seed), step \(step)")
        if took {
          holding.insert(op)
        } else {
          #expect(admission.resourceHolders.mapValues(\.count) == before, "all or nothing: seed \(seed), step \(step)")
          #expect(
            Set(admission.waitingFor(op).map(\.resource))
              == Set(
                op.resources.filter {
                  admission.resourceHolders[$0]?.count == capacity[$0]
                }), "seed \(seed), step \(step)")
        }
      }
      for (name, units) in capacity {
        let holders = admission.resourceHolders[name] ?? []
        #expect(holders.count <= units, "'\(name)' over capacity: seed \(seed), step \(step)")
        #expect(Set(holders) == Set(holding.filter { $0.resources.contains(name) }), "seed \(seed), step \(step)")
      }
    }
  }

  @Test func aCategoryKeepsItsFirstCapacityAndStartedOperationsTakeNoResource() throws {
    var admission = Admission()
    let (a, b) = (node(1), node(2))
    try admission.require(resource: "m", capacity: 1, for: a)
    #expect(throws: EngineError(.invalid, "resource 'm' already has capacity 1, not 2")) {
      try admission.require(resource: "m", capacity: 2, for: b)
    }
    b.state = .executing
    b.startTime = 0
    #expect(throws: EngineError(.alreadyStarted, "cannot add a resource to 'op2': it already started")) {
      try admission.require(resource: "m", capacity: 1, for: b)
    }
    #expect(b.resources.isEmpty && a.resources == ["m"])
  }

  /// A group holding a mutex lets its child run under it; the holder, the release and the
  /// parked operation's cause are what start-cause reports read.
  @Test func aGroupsMutexCoversItsChildrenAndReleasesAreRemembered() throws {
    var admission = Admission()
    let (group, child, other) = (node(1), node(2), node(3))
    child.group = group
    for op in [group, child, other] { try admission.require(resource: "m", capacity: 1, for: op) }
    let took = [group, child, other].map { admission.acquire($0) }
    #expect(took == [true, true, false], "the child runs inside its group's mutex; the other waits")
    #expect(admission.waitingFor(other).map(\.holders) == [[group]])
    #expect(admission.waitingFor(other).map(\.kind) == ["mutex"])
    admission.park(other)
    #expect(other.parked && admission.parked == [other])
    var freed = admission.release(child)
    #expect(freed == ["m"])
    #expect(admission.resourceHolders["m"] == [group], "the child held nothing of its own")
    freed = admission.release(group)
    #expect(freed == ["m"])
    #expect(admission.waitingFor(other).isEmpty)
    #expect(admission.resourceCause(of: other)?.sentence == "when 'op1' released mutex 'm'")
    freed = admission.release(node(4))
    #expect(freed.isEmpty, "an operation without resources frees nothing")
  }
}
