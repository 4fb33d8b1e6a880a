// The critical path follows why each operation started when it did, not only `after`:
// graphs on a manual clock whose answer is known.
import Testing

@testable import TaskEngine

/// A body that produces `child` (scheduled at once) after `at` seconds, then runs to `seconds`.
final class ProducingBody: OperationBody {
  let seconds: Double, at: Double
  let make: (Scheduler) throws -> OperationNode
  init(_ seconds: Double, producingAt at: Double, _ make: @escaping (Scheduler) throws -> OperationNode) {
    (self.seconds, self.at, self.make) = (seconds, at, make)
  }
  var summary: String { "producer" }
  func start(_ op: OperationNode, scheduler: Scheduler) {
    _ = scheduler.after(at) {
      let child = try! self.make(scheduler)
      scheduler.schedule([child])
      scheduler.produced(child, by: op)
    }
    _ = scheduler.after(seconds) { scheduler.finish(op, .succeeded) }
  }
  func interrupt(_ op: OperationNode, scheduler: Scheduler, reason: String) { scheduler.finish(op, .cancelled) }
}

@Suite struct CriticalPathTests {
  func path(_ s: Scheduler) -> [String] { s.summary.criticalPath.map(\.name) }
  func reasons(_ s: Scheduler) -> [String?] { s.summary.criticalPath.map { $0.reason?.kind } }

  @Test func queueBound() throws {
    // One slot: four independent operations run one after another; each waited for the
    // slot of the one before, so all four are the path (their dependencies are none).
    let (s, _) = makeScheduler(jobs: 1)
    let log = Log()
    for (name, seconds) in [("a", 1.0), ("b", 2.0), ("c", 1.0), ("d", 3.0)] { _ = try s.op(name, seconds, log: log) }
    try s.runAll()
    #expect(path(s) == ["a", "b", "c", "d"])
    #expect(reasons(s) == [nil, "queue", "queue", "queue"])
    #expect(s.summary.criticalPath.reduce(0) { $0 + $1.duration } == s.summary.elapsed)
  }

  @Test func queueBoundBuildAtTwoJobs() throws {
    // generate → 6 compiles at -j2 → link: the path goes through the compiles that held
    // the slots, not one compile alone (the old answer: generate → cc → link).
    let (s, _) = makeScheduler(jobs: 2)
    let log = Log()
    let generate = try s.op("generate", 1, log: log)
    let compiles = try [3.0, 1, 1, 2, 2, 1].enumerated().map {
      try s.op("cc \($0.offset + 1)", $0.element, log: log, after: [generate])
    }
    _ = try s.op("link", 1, log: log, after: compiles)
    try s.runAll()
    // cc1 (3) ∥ cc2 (1) → cc3 (1) → cc4 (2) ∥ then cc5 (2) after cc3… the slot chain that ends last.
    #expect(s.summary.elapsed == 7)
    #expect(path(s).first == "generate" && path(s).last == "link")
    #expect(s.summary.criticalPath.reduce(0) { $0 + $1.duration } == s.summary.elapsed, "\(path(s))")
    #expect(reasons(s).contains("queue"))
  }

  @Test func mutexBound() throws {
    // Three operations share a mutex; with room for all, they still run in turn.
    let (s, _) = makeScheduler(jobs: 4)
    let log = Log()
    for name in ["m1", "m2", "m3"] {
      let op = try s.op(name, 2, log: log)
      try s.require(resource: "db", capacity: 1, for: op)
    }
    _ = try s.op("free", 1, log: log)
    try s.runAll()
    #expect(path(s) == ["m1", "m2", "m3"])
    #expect(
      s.summary.criticalPath.last?.reason
        == StartReason(StartCause(after: s.operation(named: "m2")!, kind: .resource, detail: "mutex 'db'")))
  }

  @Test func conditionBound() throws {
    // save waits for fetch and for the login its condition produces, which starts only
    // once save could be evaluated: fetch → login → save.
    let (s, _) = makeScheduler(jobs: 4)
    let log = Log()
    let fetch = try s.op("fetch", 2, log: log)
    let save = try s.op("save", 1, log: log, after: [fetch])
    _ = try s.op("other", 1, log: log)
    let login = BlockCondition(
      name: "logged in",
      dependency: { _, scheduler in
        try? scheduler.makeOperation(name: "login", body: TimedBody(3, log: log))
      }, evaluate: { _, _, done in done(.satisfied) })
    try s.addCondition(login, to: save)
    try s.runAll()
    #expect(path(s) == ["fetch", "login", "save"])
    #expect(reasons(s) == [nil, "dependency", "condition"])
    #expect(s.summary.elapsed == 6)
  }

  @Test func producedOperationsContinueTheirProducer() throws {
    // a (1) → producer runs 1 s, produces child at 0.5 s; child runs 4 s: a → producer → child.
    let (s, _) = makeScheduler(jobs: 4)
    let log = Log()
    let a = try s.op("a", 1, log: log)
    let producer = try s.makeOperation(
      name: "producer",
      body: ProducingBody(1, producingAt: 0.5) { scheduler in
        try scheduler.makeOperation(name: "child", body: TimedBody(4, log: log))
      })
    try s.addDependency(producer, on: a)
    try s.runAll()
    #expect(path(s) == ["a", "producer", "child"])
    #expect(reasons(s) == [nil, "dependency", "producer"])
  }

  @Test func afterAFailFastStopTheLastOperationIsThePath() throws {
    let (s, _) = makeScheduler(jobs: 2)
    let log = Log()
    _ = try s.op("long", 5, log: log)
    _ = try s.op("fails", 1, .failed, log: log)
    _ = try s.op("later", 1, log: log, after: [s.operation(named: "fails")!])
    try s.runAll()
    #expect(path(s) == ["long"], "the operation that finished last, though nothing came before it")
  }
}
