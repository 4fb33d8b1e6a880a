// Conditions and mutual exclusion, on virtual time.
import Foundation
import Testing

@testable import TaskEngine

/// A condition that answers after `seconds` of virtual time, counting its evaluations.
final class TimedCondition: OperationCondition {
  let name: String
  let result: ConditionResult
  let seconds: Double
  var evaluations = 0
  var produce: ((OperationNode, Scheduler) -> OperationNode?)?
  init(_ name: String, _ result: ConditionResult, after seconds: Double = 0) {
    self.name = name
    self.result = result
    self.seconds = seconds
  }
  func dependency(for op: OperationNode, scheduler: Scheduler) -> OperationNode? { produce?(op, scheduler) }
  func evaluate(for op: OperationNode, scheduler: Scheduler, completion: @escaping (ConditionResult) -> Void) {
    evaluations += 1
    scheduler.after(seconds) { [result] in completion(result) }
  }
}

@Suite struct ConditionTests {
  @Test func conditionsAreEvaluatedAfterDependenciesJustBeforeStarting() throws {
    let (s, _) = makeScheduler(jobs: 2)
    let log = Log()
    let fetch = try s.op("fetch", 2, log: log)
    let build = try s.op("build", 1, log: log, after: [fetch])
    let check = TimedCondition("disk-space", .satisfied, after: 1)
    try s.addCondition(check, to: build)
    try s.runAll()
    #expect(check.evaluations == 1)
    #expect(build.startTime == 3, "after fetch (2 s) and the condition (1 s)")
  }

  @Test func failedAndSkippedConditionsAreDistinguished() throws {
    let (s, _) = makeScheduler(jobs: 2)
    s.keepGoing = true
    let log = Log()
    let a = try s.op("a", log: log)
    try s.addCondition(TimedCondition("token", .failed("no token")), to: a)
    let b = try s.op("b", log: log)
    try s.addCondition(TimedCondition("weekday", .skipped("it is Sunday")), to: b)
    try s.runAll()
    #expect(a.failed && a.error == "condition 'token' failed: no token")
    #expect(b.skipped && b.error == "condition 'weekday': it is Sunday")
    #expect(log.starts.isEmpty)
  }

  @Test func aConditionsDependencyRunsFirstAndItsFailureFailsTheCondition() throws {
    let (s, _) = makeScheduler(jobs: 2)
    s.keepGoing = true
    let log = Log()
    let save = try s.op("save", log: log)
    let login = TimedCondition("logged-in", .satisfied)
    login.produce = { _, s in try? s.op("login", 1, log: log) }
    try s.addCondition(login, to: save)
    let upload = try s.op("upload", log: log)
    let broken = TimedCondition("authorized", .satisfied)
    broken.produce = { _, s in try? s.op("authorize", 1, .failed, log: log) }
    try s.addCondition(broken, to: upload)
    try s.runAll()
    #expect(log.starts.prefix(2).sorted() == ["authorize", "login"])
    #expect(save.succeeded && save.startTime == 1)
    #expect(upload.failed && upload.error == "condition 'authorized': its dependency 'authorize' failed")
  }

  @Test func cancellingDuringConditionEvaluationWins() throws {
    let (s, _) = makeScheduler()
    let log = Log()
    let op = try s.op("op", log: log)
    try s.addCondition(TimedCondition("slow", .satisfied, after: 5), to: op)
    s.after(1) { s.cancel(op, reason: "no longer needed") }
    try s.runAll()
    #expect(op.outcome == .cancelled && op.error == "no longer needed" && !op.hasStarted)
  }

  @Test func compoundConditions() throws {
    let (s, _) = makeScheduler(jobs: 4)
    s.keepGoing = true
    let log = Log()
    let yes = TimedCondition("yes", .satisfied), no = TimedCondition("no", .failed("nope"))
    let cases: [(String, any OperationCondition)] = [
      ("not-no", NegatedCondition(no)), ("not-yes", NegatedCondition(yes)),
      ("all", CompoundCondition(.all, [yes, no])), ("any", CompoundCondition(.any, [no, yes])),
      ("none", CompoundCondition(.any, [no, no])), ("here", BlockCondition.exists("/")),
      ("gone", BlockCondition.exists("/no/such/path"))
    ]
    for (name, condition) in cases { try s.addCondition(condition, to: try s.op(name, log: log)) }
    try s.runAll()
    let outcome = { (name: String) in s.operation(named: name)!.outcome! }
    #expect(outcome("not-no") == .succeeded && outcome("not-yes") == .failed)
    #expect(outcome("all") == .failed && outcome("any") == .succeeded && outcome("none") == .failed)
    #expect(outcome("here") == .succeeded)
    #expect(
      s.operation(named: "gone")!.error == "condition 'exists '/no/such/path'' failed: '/no/such/path' does not exist")
    #expect(s.operation(named: "none")!.error == "condition 'any(no, no)' failed: no: nope; no: nope")
  }

  @Test func aMutexAllowsOneAtATimeFirstComeFirstServed() throws {
    let (s, _) = makeScheduler(jobs: 8)
    let log = Log()
    for name in ["a", "b", "c"] { try s.require(resource: "db", capacity: 1, for: try s.op(name, 1, log: log)) }
    let free = try s.op("free", 1, log: log)
    s.schedule(s.operations)
    s.pump()
    #expect(s.explain(s.operation(named: "b")!) == "'b' is ready, but waits for mutex 'db' (held by 'a')")
    s.run(until: { s.operations.allSatisfy(\.isFinished) })
    #expect(log.events == ["start a @0.0", "start free @0.0", "start b @1.0", "start c @2.0"])
    #expect(free.succeeded)
  }

  @Test func resourcesAreTakenAllAtOnceAndHonourTheirCapacity() throws {
    let (s, _) = makeScheduler(jobs: 8)
    let log = Log()
    for name in ["a", "b", "c"] { try s.require(resource: "slots", capacity: 2, for: try s.op(name, 1, log: log)) }
    let both = try s.op("both", 1, log: log)
    try s.require(resource: "slots", capacity: 2, for: both)
    try s.require(resource: "lock", capacity: 1, for: both)
    try s.runAll()
    #expect(s.elapsed == 2, "4 operations, 2 at a time")
    #expect(throws: EngineError.self) { try s.require(resource: "slots", capacity: 3, for: both) }
  }

  @Test func resourcesAreGivenBackOnFailureAndRetry() throws {
    let (s, _) = makeScheduler(jobs: 8)
    s.keepGoing = true
    let log = Log()
    let bad = try s.op("bad", 1, .failed, log: log)
    let good = try s.op("good", 1, log: log)
    for op in [bad, good] { try s.require(resource: "db", capacity: 1, for: op) }
    try s.runAll()
    #expect(good.succeeded && good.startTime == 1)
  }
}

@Suite struct ConditionFailFastTests {
  @Test func withoutKeepGoingAFailedProducedDependencyStillFailsTheConditionNotCancels() throws {
    let (s, _) = makeScheduler(jobs: 2)
    let log = Log()
    let save = try s.op("save", log: log)
    let login = TimedCondition("logged-in", .satisfied)
    login.produce = { _, s in try? s.op("login", 1, .failed, log: log) }
    try s.addCondition(login, to: save)
    try s.runAll()
    #expect(save.failed && save.error == "condition 'logged-in': its dependency 'login' failed")
  }

  @Test func aTimeoutAtTheMomentOfFinishingFinishesOnce() throws {
    let (s, _) = makeScheduler()
    let recorder = EventRecorder()
    s.sinks.append(recorder)
    let op = try s.op("edge", 3, log: Log())
    op.timeout = 3
    try s.runAll()
    let finishes = recorder.events.filter { if case .operationFinish = $0 { true } else { false } }
    #expect(finishes.count == 1)
    #expect(op.failed && op.error == "timed out after 3 s", "the timeout's timer was armed first")
  }

  @Test func cancellingAGroupWhileItsChildrenFinishFinishesEverythingOnce() throws {
    let (s, _) = makeScheduler(jobs: 4)
    let recorder = EventRecorder()
    s.sinks.append(recorder)
    let log = Log()
    let group = try s.makeGroup(name: "g")
    for name in ["a", "b"] { try s.add(try s.op(name, 1, log: log), to: group) }
    s.after(1) { s.cancel(group, reason: "stop") }  // the same instant the children finish
    try s.runAll()
    let finished = recorder.events.compactMap {
      if case .operationFinish(_, let name, _, _, _) = $0 { name } else { nil }
    }
    #expect(finished.sorted() == ["a", "b", "g"])
    #expect(group.isFinished && group.children.allSatisfy(\.isFinished))
  }
}
