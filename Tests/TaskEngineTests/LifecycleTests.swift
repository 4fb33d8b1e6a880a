// Lifecycle: the named predicates say what may still change at each point of an operation's life.
import Testing

@testable import TaskEngine

@Suite struct LifecycleTests {
  private struct Answers: Equatable {
    var mayStillChange, dependency, condition, resource, joinGroup, observer: Bool
    init(_ op: OperationNode) {
      (mayStillChange, dependency, condition) = (op.mayStillChange, op.canTakeDependency, op.canTakeCondition)
      (resource, joinGroup, observer) = (op.canTakeResource, op.canJoinGroup, op.canTakeObserver)
    }
    init(_ m: Bool, _ d: Bool, _ c: Bool, _ r: Bool, _ j: Bool, _ o: Bool) {
      (mayStillChange, dependency, condition, resource, joinGroup, observer) = (m, d, c, r, j, o)
    }
  }

  /// Declared, ready behind a full queue, executing, finished: each predicate's answer, and
  /// the scheduler refuses (or takes) the change the predicate is about accordingly.
  @Test func thePredicatesFollowAnOperationsLife() throws {
    let (s, _) = makeScheduler(jobs: 1)
    let log = Log()
    let a = try s.op("a", 5, log: log)
    let b = try s.op("b", 1, log: log)
    let c = try s.op("c", 1, log: log, after: [a])
    let other = try s.makeOperation(name: "other")
    let group = try s.makeGroup(name: "g")
    #expect(Answers(a) == Answers(true, true, true, true, true, true), "declared: anything may change")
    s.schedule([a, b, c])
    #expect(c.state == .pending && c.isScheduled)
    #expect(Answers(c) == Answers(true, true, true, true, false, true), "scheduled, waiting for 'a'")
    s.pump()
    #expect(a.state == .executing && b.state == .ready)
    #expect(Answers(a) == Answers(false, false, false, false, false, false), "executing")
    #expect(Answers(b) == Answers(true, false, false, true, false, false), "ready: evaluated, not started")
    #expect(throws: EngineError(.alreadyStarted, "cannot add a dependency to 'b': it already started")) {
      try s.addDependency(b, on: other)
    }
    #expect(throws: EngineError(.alreadyStarted, "cannot add a condition to 'b': it already started")) {
      try s.addCondition(BlockCondition(name: "never") { _, _, done in done(.satisfied) }, to: b)
    }
    #expect(throws: EngineError(.alreadyStarted, "cannot put 'b' in group 'g': it is already part of the run")) {
      try s.add(b, to: group)
    }
    try s.require(resource: "r", capacity: 1, for: b)  // taken when it starts: still possible
    #expect(b.resources == ["r"])
    #expect(throws: EngineError(.alreadyStarted, "cannot add a resource to 'a': it already started")) {
      try s.require(resource: "r", capacity: 1, for: a)
    }
    s.run(until: { b.isFinished })
    #expect(a.succeeded && b.succeeded)
    #expect(Answers(b) == Answers(false, false, false, false, false, false), "finished")
    #expect(throws: EngineError(.alreadyStarted, "cannot add a dependency to 'b': it already finished")) {
      try s.addDependency(b, on: other)
    }
    #expect(throws: EngineError(.alreadyStarted, "cannot remove a dependency of 'b': it already started")) {
      try s.removeDependency(b, other)
    }
  }

  /// A failed attempt waiting for its retry has started: no new dependency or resource, but
  /// (having no conditions) it may still take one, as before the predicates were named.
  @Test func aRetryWaitingForItsNextAttemptHasStarted() throws {
    let (s, _) = makeScheduler()
    let log = Log()
    let a = try s.op("a", 1, .failed, log: log)
    a.retry = RetryPolicy(max: 1, delay: 10)
    s.schedule([a])
    s.pump()
    s.run(until: { a.state == .pending })
    #expect(a.hasStarted && a.attempt == 1 && !a.isFinished)
    #expect(Answers(a) == Answers(false, false, true, false, false, true))
  }
}
