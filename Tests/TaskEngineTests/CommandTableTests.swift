// The scheduler's command path with a fake executor on a manual clock: stops, remote states, interrupts, retries, dry runs.
import Foundation
import TestSupport
import Testing

@testable import TaskEngine

@Suite struct CommandTableTests {
  func command(_ s: Scheduler, _ name: String, _ argv: [String], queue: WorkQueue? = nil) throws -> OperationNode {
    try s.makeOperation(name: name, queue: queue, body: CommandBody(CommandSpec(.argv(argv))))
  }

  /// `remoteState` events as "name queued|running@node @time".
  func states(_ events: [RunEvent]) -> [String] {
    events.compactMap { event in
      guard case .remoteState(let time, let name, let state) = event else { return nil }
      return "\(name) " + (state.queued ? "queued" : "running@\(state.node ?? "?")") + " @\(Int(time.rounded()))"
    }
  }

  @Test func aCancelledCommandGetsTermThenKillOnlyOnceTheGraceHasPassed() throws {
    let (s, _) = makeScheduler()
    s.killGrace = 5
    let fake = FakeExecutor(s) { _, _ in .init(seconds: 100, exitsAfterTerm: nil) }  // ignores TERM
    s.mainQueue.executor = fake
    let x = try command(s, "x", ["work"])
    s.after(10) { s.cancel(x, reason: "no longer needed") }
    try s.runAll()
    #expect(fake.log == ["start work @0", "TERM work @10", "KILL work @15", "exit 137 work @15"])
    #expect(x.outcome == .cancelled && x.error == "no longer needed")
    #expect(x.finishTime == 15)
  }

  @Test func aCommandThatExitsWithinTheGraceIsNeverKilled() throws {
    let (s, _) = makeScheduler(jobs: 2)
    s.killGrace = 5
    let fake = FakeExecutor(s) { _, _ in .init(seconds: 100, exitsAfterTerm: 1) }
    s.mainQueue.executor = fake
    let x = try command(s, "x", ["work"])
    let log = Log()
    _ = try s.op("later", 30, log: log)  // keeps the run going well past the grace
    s.after(10) { s.cancel(x) }
    try s.runAll()
    #expect(fake.log == ["start work @0", "TERM work @10", "exit 143 work @11"])
    #expect(fake.lines("KILL").isEmpty)
    #expect(x.outcome == .cancelled && x.finishTime == 11)
    #expect(s.elapsed >= 30)
  }

  @Test func aRemoteCommandsStatesReachTheEventsAndItsResultTheOutcome() throws {
    let (s, _) = makeScheduler(jobs: 2)
    s.keepGoing = true
    let recorder = EventRecorder()
    s.sinks = [recorder]
    let fake = FakeExecutor(s) { argv, _ in
      .init(seconds: 4, status: argv == ["lose"] ? 99 : 0, output: ["fake: job 1 ended", "result 42"], queuedFor: 3)
    }
    let cluster = try s.makeQueue(name: "cluster", maxConcurrent: 2)
    cluster.executor = fake
    let ok = try command(s, "ok", ["compute"], queue: cluster)
    let lost = try command(s, "lost", ["lose"], queue: cluster)
    try s.runAll()
    let seen = states(recorder.events)
    #expect(seen.filter { $0.hasPrefix("ok ") } == ["ok queued @0", "ok running@node1 @3"])
    #expect(seen.filter { $0.hasPrefix("lost ") } == ["lost queued @0", "lost running@node1 @3"])
    #expect(ok.outcome == .succeeded && ok.duration == 4, "the wait in the queue is not its time")
    #expect(ok.output == "result 42\n", "the executor's own line is not the command's output")
    #expect(
      lost.outcome == .failed && lost.error?.hasPrefix("lost by the fake cluster: lose") == true,
      "\(lost.error ?? "")")
  }

  @Test func anInterruptDuringACommandStopsItAndTheOperationEndsInterrupted() throws {
    let (s, _) = makeScheduler()
    let fake = FakeExecutor(s) { _, _ in .init(seconds: 100, exitsAfterTerm: 1) }
    s.mainQueue.executor = fake
    let x = try command(s, "x", ["work"])
    let log = Log()
    let next = try s.op("next", log: log, after: [x])
    s.after(5) { s.inbox.postSignal(SIGINT) }
    try s.runAll()
    #expect(fake.log == ["start work @0", "TERM work @5", "exit 143 work @6"])
    #expect(x.outcome == .cancelled && x.errorKind == .interrupted)
    #expect(next.outcome == .cancelled && log.starts.isEmpty)
    #expect(s.summary.interrupted)
  }

  @Test func aFailedCommandRunsAgainUntilItsRetriesAreSpent() throws {
    let (s, _) = makeScheduler(jobs: 2)
    s.keepGoing = true
    let fake = FakeExecutor(s) { argv, attempt in .init(seconds: 1, status: argv == ["flaky"] && attempt >= 3 ? 0 : 1) }
    s.mainQueue.executor = fake
    let flaky = try command(s, "flaky", ["flaky"])
    flaky.retry = RetryPolicy(max: 2, delay: 10)
    let broken = try command(s, "broken", ["broken"])
    broken.retry = RetryPolicy(max: 1, delay: 10)
    try s.runAll()
    #expect(
      fake.lines("start").filter { $0.hasPrefix("start flaky") } == [
        "start flaky @0", "start flaky @11", "start flaky @22"
      ])
    #expect(flaky.outcome == .succeeded && flaky.attempt == 3)
    #expect(fake.lines("start").filter { $0.hasPrefix("start broken") } == ["start broken @0", "start broken @11"])
    #expect(broken.outcome == .failed && broken.error == "exited with status 1: broken")
  }

  @Test func aDryRunStartsNothingAndSaysWhatItWouldRun() throws {
    let marker = Scratch.root.appendingPathComponent("dry-run-\(UUID().uuidString)").path
    let (s, _) = makeScheduler()
    var notes: [String] = []
    s.mainQueue.executor = DryRunExecutor(inbox: s.inbox) { notes.append($0) }
    let touch = try command(s, "touch", ["touch", marker])
    try s.runAll()
    #expect(notes == ["sh: touch \(marker)"])
    #expect(!FileManager.default.fileExists(atPath: marker), "the dry run ran the command")
    #expect(touch.outcome == .succeeded && touch.commandResult?.status == 0)
    #expect(touch.commandResult?.stdoutBytes == [] && touch.commandResult?.stderrBytes == [])
    // The same operation on the local runner does make the file: the check above can fail.
    let real = Scheduler(jobs: 1)
    let made = try command(real, "touch", ["touch", marker])
    try real.runAll()
    #expect(made.outcome == .succeeded && FileManager.default.fileExists(atPath: marker))
  }
}
