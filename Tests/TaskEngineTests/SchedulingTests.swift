// Scheduling: dependencies, queues, priorities and declaration order, on virtual time.
import Testing

@testable import TaskEngine

@Suite struct SchedulingTests {
  @Test func dependenciesRunFirstAndIndependentOperationsOverlap() throws {
    let (s, _) = makeScheduler(jobs: 2)
    let log = Log()
    let a = try s.op("a", 1, log: log)
    let b = try s.op("b", 2, log: log)
    let c = try s.op("c", 1, log: log, after: [a, b])
    try s.runAll()
    #expect(log.events == ["start a @0.0", "start b @0.0", "start c @2.0"])
    #expect(c.succeeded && c.duration == 1)
    #expect(s.elapsed == 3)
  }

  @Test func mainQueueLimitIsTheJobCount() throws {
    let (s, _) = makeScheduler(jobs: 2)
    let log = Log()
    for name in ["a", "b", "c", "d", "e"] { _ = try s.op(name, 1, log: log) }
    try s.runAll()
    #expect(s.elapsed == 3)  // 5 one-second operations, 2 at a time
  }

  @Test func queueLimitsApplyPerQueueAndDependenciesCrossQueues() throws {
    let (s, _) = makeScheduler(jobs: 8)
    let log = Log()
    let net = try s.makeQueue(name: "net", maxConcurrent: 1)
    let f1 = try s.op("f1", 1, log: log, queue: net)
    let f2 = try s.op("f2", 1, log: log, queue: net)
    let build = try s.op("build", 1, log: log, after: [f1, f2])
    _ = try s.op("other", 1, log: log)
    try s.runAll()
    #expect(log.events.contains("start f2 @1.0"))
    #expect(log.events.contains("start other @0.0"))
    #expect(build.startTime == 2)
  }

  @Test func higherPriorityStartsFirstThenDeclarationOrder() throws {
    let (s, _) = makeScheduler(jobs: 1)
    let log = Log()
    _ = try s.op("low", log: log).priority = .low
    _ = try s.op("first", log: log)
    _ = try s.op("urgent", log: log).priority = .veryHigh
    _ = try s.op("second", log: log)
    try s.runAll()
    #expect(log.starts == ["urgent", "first", "second", "low"])
  }

  @Test func unlimitedQueueRunsEverythingAtOnce() throws {
    let (s, _) = makeScheduler(jobs: 1)
    let log = Log()
    let wide = try s.makeQueue(name: "wide", maxConcurrent: -1)
    for i in 0..<50 { _ = try s.op("w\(i)", 1, log: log, queue: wide) }
    try s.runAll()
    #expect(s.elapsed == 1)
  }

  @Test func suspendedQueueHoldsItsOperationsUntilResumed() throws {
    let (s, _) = makeScheduler(jobs: 4)
    let log = Log()
    let q = try s.makeQueue(name: "held", suspended: true)
    let held = try s.op("held", 1, log: log, queue: q)
    _ = try s.op("free", 1, log: log)
    s.after(5) { s.resume(q) }
    try s.runAll()
    #expect(held.startTime == 5 && held.succeeded)
  }

  @Test func aQueueThatStaysSuspendedCancelsItsOperationsWithTheReason() throws {
    let (s, _) = makeScheduler()
    let q = try s.makeQueue(name: "held", suspended: true)
    let held = try s.op("held", log: Log(), queue: q)
    try s.runAll()
    #expect(held.outcome == .cancelled)
    #expect(held.error == "never started: queue 'held' is suspended")
  }

  @Test func onlyScheduledOperationsAndTheirDependenciesRun() throws {
    let (s, _) = makeScheduler()
    let log = Log()
    let a = try s.op("a", log: log)
    let b = try s.op("b", log: log, after: [a])
    _ = try s.op("unrelated", log: log)
    try s.runAll([b])
    #expect(log.starts == ["a", "b"])
  }

  @Test func planListsDependenciesFirstThenPriorityThenDeclarationOrder() throws {
    let (s, _) = makeScheduler()
    let log = Log()
    let fetch = try s.op("fetch", log: log)
    let gen = try s.op("gen", log: log)
    gen.priority = .high
    let build = try s.op("build", log: log, after: [fetch, gen])
    _ = try s.op("docs", log: log)
    #expect(s.plan(for: [build]).map(\.name) == ["gen", "fetch", "build"])
    #expect(s.plan(for: s.operations).map(\.name) == ["gen", "fetch", "build", "docs"])
  }

  @Test func startsAndSuccessesAreMadeOnlyWhileSomeSinkReadsThem() throws {
    final class FailuresOnly: EventSink {
      var events: [RunEvent] = []
      var interests: EventInterests { [] }
      func receive(_ event: RunEvent) { events.append(event) }
    }
    func starts(_ events: [RunEvent]) -> [String] {
      events.compactMap { if case .operationStart(_, let name, _, _, _, _, _, _) = $0 { name } else { nil } }
    }
    func finishes(_ events: [RunEvent]) -> [String] {
      events.compactMap { if case .operationFinish(_, let name, _, _, _) = $0 { name } else { nil } }
    }
    let (s, _) = makeScheduler()
    s.keepGoing = true
    let quiet = FailuresOnly()
    s.sinks.append(quiet)
    _ = try s.op("ok", 1, log: Log())
    _ = try s.op("bad", 1, .failed, log: Log())
    try s.runAll()
    #expect(starts(quiet.events).isEmpty && finishes(quiet.events) == ["bad"])
    #expect(quiet.events.contains { if case .runStart = $0 { true } else { false } })

    let recorder = EventRecorder()  // a sink that reads them joins: every sink gets them again
    s.sinks.append(recorder)
    _ = try s.op("later", 1, log: Log())
    try s.runAll()
    #expect(starts(recorder.events) == ["later"] && finishes(recorder.events) == ["later"])
    #expect(starts(quiet.events) == ["later"] && finishes(quiet.events) == ["bad", "later"])
  }

  /// A live view reads starts but not why they started: no reason is made for it (an after
  /// name, a kind and a detail for every operation); a sink that reads reasons gets them.
  @Test func startReasonsAreMadeOnlyWhileSomeSinkReadsThem() throws {
    final class StartsOnly: EventSink {
      var reasons: [String: StartReason?] = [:]
      var interests: EventInterests { [.starts] }
      func receive(_ event: RunEvent) {
        if case .operationStart(_, let name, _, let reason, _, _, _, _) = event { reasons[name] = reason }
      }
    }
    let (s, _) = makeScheduler()
    let view = StartsOnly()
    s.sinks.append(view)
    let a = try s.op("a", 1, log: Log())
    _ = try s.op("b", 1, log: Log(), after: [a])
    try s.runAll()
    #expect(view.reasons.keys.sorted() == ["a", "b"] && view.reasons["b"]! == nil)

    let recorder = EventRecorder()
    s.sinks.append(recorder)
    let c0 = try s.op("c0", 1, log: Log())
    _ = try s.op("c", 1, log: Log(), after: [c0])
    try s.runAll()
    let expected = StartReason(StartCause(after: c0, kind: .dependency, detail: nil))
    #expect(view.reasons["c"]! == expected)
  }

  /// A live view writes a frame's finished lines together: with `successesAtTick` (and no
  /// sink reading successes at once), the operations that succeeded since the last event
  /// come as one `successes` event, in the order they succeeded, before any other event (a
  /// failure, a tick's progress), so every line keeps its place, and when the loop returns to
  /// whoever waited (the last one here). A group's success is told at once; a sink that reads
  /// successes gets every one as it comes.
  @Test func successesAtTickComeTogetherBeforeTheNextEvent() throws {
    final class FrameView: EventSink {
      var lines: [String] = []
      let reads: EventInterests
      init(_ reads: EventInterests) { self.reads = reads }
      var interests: EventInterests { reads }
      func receive(_ event: RunEvent) {
        switch event {
        case .successes(let time, let operations):
          lines.append("ok " + operations.map(\.name).joined(separator: " ") + " @\(time)")
        case .operationFinish(let time, let name, let outcome, _, _): lines.append("\(outcome) \(name) @\(time)")
        case .runProgress(let time, _) where time == time.rounded(): lines.append("progress @\(time)")
        default: break
        }
      }
    }
    func run(_ views: [FrameView]) throws {
      let (s, _) = makeScheduler(jobs: 4)
      s.keepGoing = true
      s.tickInterval = 1
      s.sinks = views
      let log = Log()
      let a = try s.op("a", 0.25, log: log)
      _ = try s.op("b", 0.5, log: log)
      _ = try s.op("c", 0.75, .failed, log: log)
      _ = try s.op("d", 1.5, log: log)
      _ = try s.op("e", 0.25, log: log, after: [a])
      let group = try s.makeGroup(name: "g")
      try s.addDependency(group, on: a)
      try s.add(try s.op("child", 2.5, log: log), to: group)
      _ = try s.op("last", 3.25, log: log)
      try s.runAll()
    }
    let view = FrameView([.successesAtTick])
    try run([view])
    #expect(
      view.lines == [
        "progress @0.0", "ok a b e @0.75", "failed c @0.75", "progress @1.0", "ok d @2.0",
        "progress @2.0", "progress @3.0", "ok child @3.0", "succeeded g @3.0", "ok last @3.75"
      ],
      "\(view.lines)")

    let frames = FrameView([.successesAtTick]), atOnce = FrameView([.successes])
    try run([frames, atOnce])
    #expect(!frames.lines.contains { $0.hasPrefix("ok ") }, "\(frames.lines)")
    #expect(frames.lines == atOnce.lines && frames.lines.filter { $0.hasPrefix("succeeded") }.count == 7)
  }

  /// A live view draws what runs at its frames: an operation that started and finished
  /// between two ticks makes no start for it; one still running at a tick is announced then,
  /// with the time it started, before that tick's progress. A group's start comes at once
  /// (its finish alone does not say it was a group), and a sink that reads starts at once
  /// gets every one, as before.
  @Test func startsAtTickAnnounceOnlyWhatStillRunsAtATick() throws {
    final class FrameView: EventSink {
      var lines: [String] = []
      var interests: EventInterests { [.startsAtTick, .successes] }
      func receive(_ event: RunEvent) {
        switch event {
        case .operationStart(let time, let name, _, _, _, _, _, _): lines.append("start \(name) @\(time)")
        case .operationFinish(let time, let name, _, _, _): lines.append("finish \(name) @\(time)")
        case .runProgress(let time, let progress): lines.append("progress @\(time) running \(progress.running)")
        default: break
        }
      }
    }
    func run(alsoReadingStarts: Bool) throws -> [String] {
      let (s, _) = makeScheduler(jobs: 3)
      s.tickInterval = 1
      let view = FrameView()
      s.sinks.append(view)
      if alsoReadingStarts { s.sinks.append(EventRecorder()) }
      let log = Log()
      let first = try s.op("first", 1.5, log: log)
      _ = try s.op("quick", 0.25, log: log, after: [first])
      _ = try s.op("slow", 3, log: log, after: [first])
      let group = try s.makeGroup(name: "group")
      try s.addDependency(group, on: first)
      try s.add(try s.op("child", 0.25, log: log), to: group)
      try s.runAll()
      return view.lines.filter { !$0.hasPrefix("progress") || $0.hasPrefix("progress @2.0") }
    }
    let framed = try run(alsoReadingStarts: false)
    #expect(!framed.contains { $0.hasPrefix("start quick") || $0.hasPrefix("start child") }, "\(framed)")
    #expect(framed.contains("finish quick @1.75") && framed.contains("finish child @1.75"), "\(framed)")
    #expect(framed.contains("start group @1.5"))
    let slow = framed.firstIndex(of: "start slow @1.5"), tick = framed.firstIndex(of: "progress @2.0 running 1")
    #expect(
      slow != nil && tick != nil && slow! + 1 == tick!, "slow is announced at the tick after it started: \(framed)")
    #expect(framed.firstIndex(of: "finish quick @1.75").flatMap { finish in slow.map { finish < $0 } } == true)
    let atOnce = try run(alsoReadingStarts: true)
    #expect(atOnce.contains("start quick @1.5") && atOnce.contains("start child @1.5"), "\(atOnce)")
    let (start, finish) = (atOnce.firstIndex(of: "start slow @1.5"), atOnce.firstIndex(of: "finish quick @1.75"))
    #expect(start != nil && finish != nil && start! < finish!)
  }

  @Test func eventsReportStartsAndFinishesWithOutcomes() throws {
    let (s, _) = makeScheduler()
    let recorder = EventRecorder()
    s.sinks.append(recorder)
    _ = try s.op("a", 2, log: Log())
    try s.runAll()
    s.finishRun()
    guard case .operationFinish(let time, let name, let outcome, let duration, let details) = recorder.events[2] else {
      Issue.record("expected a finish event, got \(recorder.events)")
      return
    }
    #expect(recorder.events.count == 5)
    #expect(
      (time, name, outcome, duration) == (2, "a", .succeeded, 2) && details == nil, "a quiet success carries no details"
    )
    guard case .runProgress(_, let progress) = recorder.events[3] else { Issue.record("no final progress"); return }
    #expect(progress.fraction == 1 && progress.done == 1 && progress.running == 0)
    guard case .runFinish(_, let summary) = recorder.events[4] else { Issue.record("no run_finish"); return }
    #expect(summary.succeeded == 1 && summary.allSucceeded)
  }
}

@Suite struct SummaryTests {
  @Test func summaryNamesTheSlowestOperationsAndTheCriticalPath() throws {
    let (s, _) = makeScheduler(jobs: 4)
    let log = Log()
    let fetch = try s.op("fetch", 2, log: log)
    let gen = try s.op("gen", 1, log: log)
    let build = try s.op("build", 3, log: log, after: [fetch, gen])
    _ = try s.op("docs", 4, log: log)
    _ = try s.op("test", 1, log: log, after: [build])
    try s.runAll()
    let summary = s.summary
    #expect(summary.criticalPath.map(\.name) == ["fetch", "build", "test"])
    #expect(summary.slowest.map(\.name) == ["docs", "build", "fetch", "gen", "test"])
    #expect(summary.slowest.first?.duration == 4)
    #expect(summary.elapsed == 6)
  }
}
