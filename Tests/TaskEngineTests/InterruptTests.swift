// Interrupts and os.exit on a manual clock: nothing starts after one, and an idle run ends at once.
import Foundation
import Testing

@testable import TaskEngine

/// A body that never finishes by itself (it waits for something outside the scheduler).
final class StuckBody: OperationBody {
  var summary: String { "stuck" }
  func start(_ op: OperationNode, scheduler: Scheduler) {}
  func interrupt(_ op: OperationNode, scheduler: Scheduler, reason: String) { scheduler.finish(op, .cancelled) }
}

/// A body that is stopped by the interrupt flag the way a CPU-bound Lua body is: the signal
/// is posted while it runs and it ends at once, before the loop has drained the inbox.
final class InterruptedBody: OperationBody {
  var summary: String { "interrupted" }
  func start(_ op: OperationNode, scheduler: Scheduler) {
    scheduler.after(1) {
      scheduler.inbox.postSignal(SIGINT)
      scheduler.absorbSignals()
      scheduler.finish(op, .cancelled, error: "interrupted")
    }
  }
  func interrupt(_ op: OperationNode, scheduler: Scheduler, reason: String) {}
}

@Suite struct InterruptTests {
  @Test func anInterruptDuringARetryWaitCancelsTheNextAttempt() throws {
    let (s, _) = makeScheduler()
    let log = Log()
    let flaky = try s.op("flaky", 1, .failed, log: log)
    flaky.retry = RetryPolicy(max: 5, delay: 10)
    s.after(5) { s.inbox.postSignal(SIGINT) }  // during the first 10 s wait
    try s.runAll()
    #expect(log.starts == ["flaky"], "an attempt started after the interrupt: \(log.events)")
    #expect(flaky.outcome == .cancelled && flaky.errorKind == .interrupted)
    #expect(s.summary.interrupted)
    #expect(s.elapsed < 6)
  }

  @Test func nothingStartsAfterABodyStoppedByTheInterruptFlag() throws {
    let (s, _) = makeScheduler(jobs: 4)
    let log = Log()
    let spin = try s.makeOperation(name: "spin", body: InterruptedBody())
    let cleanup = try s.op("cleanup", log: log, after: [spin])
    cleanup.policy = .finished
    let after = try s.op("after", log: log, after: [spin])
    try s.runAll()
    #expect(log.starts.isEmpty, "started after the interrupt: \(log.starts)")
    #expect(cleanup.outcome == .cancelled && after.outcome == .cancelled)
    #expect(s.summary.interrupted && s.interrupts == 1)
  }

  @Test func aFinishedOperationsTimeoutDoesNotKeepAStalledRunWaiting() throws {
    let (s, _) = makeScheduler(jobs: 2)
    let log = Log()
    let quick = try s.op("quick", 1, log: log)
    quick.timeout = 3600
    let paused = try s.makeQueue(name: "paused", suspended: true)
    let never = try s.op("never", log: log, queue: paused)
    try s.runAll()
    #expect(never.error == "never started: queue 'paused' is suspended")
    #expect(s.elapsed < 2, "the stall was noticed only after \(s.elapsed) s")
  }

  @Test func anOperationParkedOnAMutexNamesItAndItsHolder() throws {
    let (s, _) = makeScheduler(jobs: 2)
    let holder = try s.makeOperation(name: "holder", body: StuckBody())
    let needs = try s.makeOperation(name: "needs", body: StuckBody())
    try s.require(resource: "m", capacity: 1, for: holder)
    try s.require(resource: "m", capacity: 1, for: needs)
    try s.resolveNames()
    s.schedule(s.operations)
    s.run(until: { needs.isFinished })
    #expect(needs.error == "never started: waits for mutex 'm' (held by 'holder')")
    #expect(s.explain(holder) == "'holder' is executing")
  }

  @Test func endingTheRunCancelsEverythingWithoutCountingAsAnInterrupt() throws {
    let (s, _) = makeScheduler(jobs: 1)
    let log = Log()
    let running = try s.op("running", 10, log: log)
    let pending = try s.op("pending", log: log)
    let cleanup = try s.op("cleanup", log: log, after: [running])
    cleanup.policy = .finished
    var halted = 0
    s.onHalt = { halted += 1 }
    s.after(2) { s.end(because: "os.exit(3) ended the run") }
    try s.runAll()
    #expect(log.starts == ["running"])
    for op in [running, pending, cleanup] {
      #expect(op.outcome == .cancelled && op.error == "os.exit(3) ended the run", "\(op.name)")
    }
    #expect(!s.summary.interrupted && s.endedBy != nil && halted == 1)
  }

  @Test func signalsAtTheREPLPromptAreNotForTheNextEvaluation() throws {
    let (s, _) = makeScheduler()
    let log = Log()
    s.inbox.postSignal(SIGINT)
    s.inbox.discardSignals()
    s.endInterrupt()
    let op = try s.op("next", log: log)
    try s.runAll()
    #expect(op.succeeded && s.interrupts == 0)
  }
}
