// Groups: children run inside their group, on virtual time.
import Testing

@testable import TaskEngine

@Suite struct GroupTests {
  @Test func dependenciesOfAGroupGateAllItsChildren() throws {
    let (s, _) = makeScheduler(jobs: 4)
    let log = Log()
    let fetch = try s.op("fetch", 2, log: log)
    let group = try s.makeGroup(name: "import")
    try s.addDependency(group, on: fetch)
    for name in ["a", "b"] { try s.add(try s.op(name, 1, log: log), to: group) }
    let after = try s.op("after", 1, log: log, after: [group])
    try s.runAll()
    #expect(log.events == ["start fetch @0.0", "start a @2.0", "start b @2.0", "start after @3.0"])
    #expect(group.succeeded && group.duration == 1)
    #expect(after.succeeded)
  }

  @Test func aGroupFailsIfAChildFailsAndTakesNoQueueSlot() throws {
    let (s, _) = makeScheduler(jobs: 1)
    s.keepGoing = true
    let log = Log()
    let outer = try s.makeGroup(name: "outer")
    let inner = try s.makeGroup(name: "inner")
    try s.add(inner, to: outer)
    try s.add(try s.op("ok", 1, log: log), to: inner)
    try s.add(try s.op("bad", 1, .failed, log: log), to: inner)
    try s.runAll()
    #expect(inner.failed && inner.error == "'bad' failed: boom")
    #expect(outer.failed && outer.error == "'inner' failed: 'bad' failed: boom")
    #expect(s.elapsed == 2, "with -j1 the children still run: groups take no slot")
  }

  @Test func cancellingAGroupCancelsItsChildren() throws {
    let (s, _) = makeScheduler(jobs: 4)
    let log = Log()
    let group = try s.makeGroup(name: "g")
    let slow = try s.op("slow", 10, log: log)
    try s.add(slow, to: group)
    s.after(1) { s.cancel(group, reason: "stop") }
    try s.runAll()
    #expect(group.outcome == .cancelled && slow.outcome == .cancelled && slow.error == "stop")
  }

  @Test func childrenOfAGroupThatNeverRunsEndWithIt() throws {
    let (s, _) = makeScheduler()
    s.keepGoing = true
    let log = Log()
    let bad = try s.op("bad", 1, .failed, log: log)
    let group = try s.makeGroup(name: "g")
    try s.addDependency(group, on: bad)
    let child = try s.op("child", log: log)
    try s.add(child, to: group)
    try s.runAll()
    #expect(group.skipped && child.skipped && child.error == "group 'g' skipped")
  }

  @Test func aGroupAndItsChildSharingAMutexDoNotDeadlock() throws {
    let (s, _) = makeScheduler(jobs: 4)
    let log = Log()
    let group = try s.makeGroup(name: "g")
    try s.require(resource: "db", capacity: 1, for: group)
    let child = try s.op("child", 1, log: log)
    try s.require(resource: "db", capacity: 1, for: child)
    try s.add(child, to: group)
    let outsider = try s.op("outsider", 1, log: log)
    try s.require(resource: "db", capacity: 1, for: outsider)
    try s.runAll()
    #expect(group.succeeded && child.succeeded && outsider.succeeded)
    #expect(outsider.startTime == 1, "the outsider waits until the group gives the mutex back")
  }

  @Test func schedulingAChildMeansSchedulingItsGroupAndPlansListChildrenAfterIt() throws {
    let (s, _) = makeScheduler()
    let log = Log()
    let group = try s.makeGroup(name: "g")
    let child = try s.op("child", 1, log: log)
    try s.add(child, to: group)
    let user = try s.op("user", 1, log: log, after: [child])
    #expect(s.plan(for: [user]).map(\.name) == ["g", "child", "user"])
    try s.runAll([user])
    #expect(group.succeeded && user.succeeded)
    #expect(throws: EngineError.self) { try s.add(group, to: group) }
  }
}
