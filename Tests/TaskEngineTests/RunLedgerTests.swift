// RunLedger, StopState and Announcer: the reporting components on plain values and on virtual time.
import Testing

@testable import TaskEngine

@Suite struct RunLedgerTests {
  let queue = WorkQueue(id: 0, name: "main", maxConcurrent: 2, suspended: false)

  func node(_ id: Int, weight: Double = 1, scheduled: Bool = true) -> OperationNode {
    let op = OperationNode(id: id, name: "op\(id)", queue: queue)
    op.weight = weight
    op.isScheduled = scheduled
    return op
  }

  /// Every operation is in exactly one count at every step, and the weights follow: what
  /// finished (not what was cancelled) is the fraction done.
  @Test func countsAddUpAsOperationsMove() {
    var ledger = RunLedger()
    #expect(ledger.begin(at: 10) && !ledger.begin(at: 11) && ledger.elapsed(at: 12) == 2)
    let ops = [node(1, weight: 1), node(2, weight: 2), node(3, weight: 1)]
    for op in ops { ledger.scheduled(op) }
    func total(_ p: RunProgress) -> Int { p.done + p.failed + p.running + p.pending }
    #expect(ledger.counts.pending == 3 && ledger.unfinishedScheduled == 3 && ledger.scheduledWeight == 4)
    ledger.started(ops[0])
    ledger.started(ops[1])
    #expect(ledger.counts.running == 2 && ledger.counts.pending == 1 && total(ledger.counts) == 3)
    ledger.retried(ops[1])
    #expect(ledger.counts.running == 1 && ledger.counts.pending == 2 && total(ledger.counts) == 3)
    ledger.finished(ops[0], .succeeded, executing: true, duration: 4)
    ledger.finished(ops[2], .cancelled, executing: false, duration: nil)
    #expect(ledger.counts.done == 1 && ledger.counts.failed == 1 && ledger.counts.cancelled == 1)
    #expect(ledger.counts.pending == 1 && ledger.counts.running == 0 && total(ledger.counts) == 3)
    #expect(ledger.ranWeight == 1 && ledger.ranSeconds == 4 && ledger.cancelledWeight == 1)
    let progress = ledger.progressNow(at: 16, executing: [], slots: 2, stopping: false)
    #expect(progress.fraction == 0.25, "1 of 4 units done; the cancelled one is not progress")
    #expect(progress.eta != nil, "one finished operation gives a pace")
    ledger.started(ops[1])
    ledger.finished(ops[1], .failed, executing: true, duration: 1)
    #expect(ledger.counts.failed == 2 && total(ledger.counts) == 3 && ledger.unfinishedScheduled == 0)
    #expect(ledger.progressNow(at: 17, executing: [], slots: 2, stopping: true).eta == nil)
    #expect(ledger.beginNewRun() && ledger.runStartTime == nil && ledger.counts == RunProgress())
  }

  /// A group counts among the unfinished (the run waits for it) but not in the counts; an
  /// operation never scheduled changes nothing when it finishes.
  @Test func groupsAndUnscheduledOperationsStayOutOfTheCounts() {
    var ledger = RunLedger()
    let group = node(1)
    group.isGroup = true
    ledger.scheduled(group)
    #expect(ledger.unfinishedScheduled == 1 && ledger.counts.pending == 0 && ledger.scheduledWeight == 0)
    ledger.finished(group, .skipped, executing: false, duration: nil)
    ledger.finished(node(2, scheduled: false), .cancelled, executing: false, duration: nil)
    #expect(ledger.unfinishedScheduled == 0 && ledger.counts == RunProgress())
    #expect(
      ledger.activity("net", by: 1) == 1 && ledger.activity("net", by: 1) == 2 && ledger.activity("net", by: -1) == 1)
    #expect(!ledger.beginNewRun() || ledger.activityCounts["net"] == 1, "a new run keeps what executes")
  }

  /// A group skipped before it ran ends its nested group and that group's child: the final
  /// progress has nothing pending and the whole run done (a nested group was counted as a
  /// pending operation that never finished, so the run ended short of 100%).
  @Test func aSkippedGroupWithANestedGroupLeavesNothingPending() throws {
    let (s, _) = makeScheduler()
    s.keepGoing = true
    let recorder = EventRecorder()
    s.sinks.append(recorder)
    let log = Log()
    let bad = try s.op("bad", 1, .failed, log: log)
    let outer = try s.makeGroup(name: "outer")
    try s.addDependency(outer, on: bad)
    let inner = try s.makeGroup(name: "inner")
    try s.add(inner, to: outer)
    let child = try s.op("child", log: log)
    try s.add(child, to: inner)
    try s.runAll()
    s.finishRun()
    #expect(outer.skipped && inner.skipped && child.skipped)
    let last = recorder.events.compactMap { event -> RunProgress? in
      if case .runProgress(_, let progress) = event { return progress } else { return nil }
    }.last
    #expect(last?.pending == 0 && last?.running == 0, "\(String(describing: last))")
    #expect(last?.done == 1 && last?.failed == 1 && last?.fraction == 1, "\(String(describing: last))")
    #expect(s.unfinishedScheduled == 0)
  }
}

@Suite struct StopStateTests {
  @Test func theFirstReasonStaysAndOnlyAFailureIsCleared() {
    var stop = StopState()
    stop.stop(because: "first")
    stop.stop(because: "second")
    #expect(stop.stopReason == "first" && !stop.halted)
    stop.clear()
    #expect(stop.stopReason == nil)
    #expect(stop.interrupted() == 1 && stop.stopReason == "interrupted" && stop.halted)
    stop.clear()
    #expect(stop.stopReason == "interrupted", "an interrupt stays in force")
    #expect(stop.interrupted() == 2)
    stop.endInterrupt(signalsPosted: 5)
    #expect(stop.interrupts == 0 && stop.stopReason == nil && stop.signalsHandled == 5 && !stop.halted)
  }

  @Test func signalsAreTakenOneAtATimeUpToThePostedCount() {
    var stop = StopState()
    var taken: [Int] = []
    while let n = stop.nextSignal(posted: 3) { taken.append(n) }
    #expect(taken == [1, 2, 3] && stop.nextSignal(posted: 3) == nil)
  }

  @Test func anEndKeepsItsFirstReasonAndHalts() {
    var stop = StopState()
    #expect(stop.end(because: "os.exit(3)") && !stop.end(because: "again"))
    #expect(stop.endedBy == "os.exit(3)" && stop.stopReason == "os.exit(3)" && stop.halted && stop.interrupts == 0)
  }

  @Test func onlyAFirstFailureWithoutKeepGoingStopsTheRun() {
    let op = OperationNode(id: 1, name: "x", queue: WorkQueue(id: 0, name: "main", maxConcurrent: 1, suspended: false))
    op.outcome = .failed
    var stop = StopState()
    #expect(stop.stopsAfter(op, keepGoing: false) && !stop.stopsAfter(op, keepGoing: true))
    stop.stop(because: StopState.failFastReason(op))
    #expect(!stop.stopsAfter(op, keepGoing: false), "already stopping")
    #expect(stop.stopReason == "not started: the run stopped after 'x' failed (-k keeps going)")
    op.outcome = .skipped
    #expect(!StopState().stopsAfter(op, keepGoing: false))
  }
}

@Suite struct AnnouncerTests {
  final class HeldView: EventSink {
    var events: [RunEvent] = []
    var interests: EventInterests { [.successesAtTick] }
    func receive(_ event: RunEvent) { events.append(event) }
  }

  func successes(_ view: HeldView) -> [[String]] {
    view.events.compactMap { event -> [String]? in
      if case .successes(_, let ops) = event { return ops.map(\.name) } else { return nil }
    }
  }

  /// Successes held for the next event go to the sinks that were there when they happened
  /// when the sinks are replaced, and not to the new ones.
  @Test func replacingTheSinksTellsTheOldOnesWhatWasHeld() throws {
    let (s, _) = makeScheduler(jobs: 2)
    let old = HeldView(), new = HeldView()
    s.sinks = [old]
    _ = try s.op("a", 1, log: Log())
    _ = try s.op("b", 3, log: Log())
    s.after(1.5) { s.setSinks([new]) }  // a succeeded at 1 and is held: no event since
    try s.runAll()
    #expect(successes(old) == [["a"]], "\(old.events)")
    #expect(successes(new) == [["b"]], "\(new.events)")
  }

  /// With no sink, an operation's start and finish make no event and hold nothing for a
  /// sink that comes later.
  @Test func withoutSinksNothingIsHeldOrWaitsForATick() throws {
    let (s, _) = makeScheduler()
    s.tickInterval = 1
    _ = try s.op("a", 3, log: Log())
    try s.runAll()
    let late = EventRecorder()
    s.sinks = [late]
    s.finishRun()
    #expect(late.events.count == 2, "only the final progress and run_finish: \(late.events)")
  }
}
