import TestSupport
// The name index finds what a dictionary would, through inserts, renames and removals.
import Testing

@testable import TaskEngine

@Suite struct NameIndexTests {
  let queue = WorkQueue(id: 0, name: "main", maxConcurrent: -1, suspended: false)

  /// Two different names with the same 32-bit hash (found by search among random names; a
  /// pair is expected within ~80,000): each is found as itself, removing one leaves the other.
  @Test func namesThatShareAHashAreToldApartByTheirText() throws {
    var rng = SplitMix64(state: 1)
    var seen: [UInt32: String] = [:]
    var pair: (String, String)?
    for _ in 0..<1_000_000 {
      let name = String(rng.next(), radix: 36)
      let hash = NameIndex.hash(name)
      if let other = seen[hash] { pair = (other, name); break }
      seen[hash] = name
    }
    let (a, b) = try #require(pair)
    #expect(NameIndex.hash(a) == NameIndex.hash(b) && a != b)
    var index = NameIndex()
    var operations: [OperationNode] = []
    for name in [a, "x", b] {
      operations.append(OperationNode(id: operations.count + 1, name: name, queue: queue))
      #expect(index.insert(name, id: operations.count, in: operations) == nil)
    }
    #expect(index.id(of: a, in: operations) == 1 && index.id(of: b, in: operations) == 3)
    #expect(index.insert(b, id: 9, in: operations) == 3)  // taken: nothing changes
    index.remove(a, in: operations)
    #expect(index.id(of: a, in: operations) == nil && index.id(of: b, in: operations) == 3)
    #expect(index.count == 2)
  }

  /// Random inserts (some of names already taken), renames and removals from a small set of
  /// names, so that runs of occupied slots form, merge and are cut: after every step the index
  /// answers as a dictionary kept beside it.
  @Test func answersAsADictionaryWould() {
    var rng = SplitMix64.seeded(by: "TASKRUN_NAMEINDEX_SEED", for: "NameIndexTests")
    let seed = rng.state
    for round in 0..<40 {
      let pool = (0..<rng.int(1...600)).map { "t\($0)_\(rng.int(0...9))" }
      var index = NameIndex()
      var operations: [OperationNode] = []
      var model: [String: Int] = [:]
      for step in 0..<rng.int(1...3_000) {
        let name = rng.pick(pool)
        switch rng.int(0...9) {
        case 0...5:  // declare: a taken name gives its holder back and adds nothing
          operations.append(OperationNode(id: operations.count + 1, name: name, queue: queue))
          let holder = index.insert(name, id: operations.count, in: operations)
          #expect(holder == model[name], "seed \(seed), round \(round), step \(step)")
          if holder == nil { model[name] = operations.count } else { operations.removeLast() }
        case 6...7:  // forget
          index.remove(name, in: operations)
          model[name] = nil
        default:  // a new operation takes a name that is in use
          guard model[name] != nil else { continue }
          operations.append(OperationNode(id: operations.count + 1, name: name, queue: queue))
          index.replace(name, with: operations.count, in: operations)
          model[name] = operations.count
        }
        #expect(index.count == model.count, "seed \(seed), round \(round), step \(step)")
        let probe = rng.pick(pool)
        #expect(index.id(of: probe, in: operations) == model[probe], "seed \(seed), round \(round), step \(step)")
      }
      for name in pool {
        #expect(index.id(of: name, in: operations) == model[name], "seed \(seed), round \(round)")
      }
    }
  }
}
