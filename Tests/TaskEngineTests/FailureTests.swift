// Failure policy, `when`, cancellation and timeouts.
import Glibc
import Testing

@testable import TaskEngine

@Suite struct FailureTests {
  @Test func firstFailureStopsNewOperationsButRunningOnesFinish() throws {
    let (s, _) = makeScheduler(jobs: 2)
    let log = Log()
    let bad = try s.op("bad", 1, .failed, log: log)
    let running = try s.op("running", 3, log: log)
    let later = try s.op("later", 1, log: log)
    try s.runAll()
    #expect(bad.failed && bad.error == "boom")
    #expect(running.succeeded)
    #expect(later.outcome == .cancelled)
    #expect(later.error == "not started: the run stopped after 'bad' failed (-k keeps going)")
    #expect(!s.summary.allSucceeded)
  }

  @Test func withoutKeepGoingDependentsOfTheFailureAreSkippedNotCancelled() throws {
    let (s, _) = makeScheduler(jobs: 1)
    let log = Log()
    let other = try s.op("other", 1, log: log)
    let bad = try s.op("bad", 1, .failed, log: log)
    let dependent = try s.op("dependent", log: log, after: [bad, other])
    let grandchild = try s.op("grandchild", log: log, after: [dependent])
    bad.priority = .high
    try s.runAll()
    #expect(other.outcome == .cancelled)
    #expect(dependent.skipped && dependent.error == "dependency 'bad' failed")
    #expect(grandchild.skipped && grandchild.error == "dependency 'dependent' skipped")
  }

  @Test func keepGoingRunsIndependentWorkAndSkipsDependents() throws {
    let (s, _) = makeScheduler(jobs: 1)
    s.keepGoing = true
    let log = Log()
    let bad = try s.op("bad", 1, .failed, log: log)
    let dependent = try s.op("dependent", log: log, after: [bad])
    let independent = try s.op("independent", log: log)
    try s.runAll()
    #expect(dependent.skipped && dependent.error == "dependency 'bad' failed")
    #expect(independent.succeeded)
    #expect(s.summary.counts == "1 succeeded, 1 failed, 1 skipped")
  }

  @Test func whenFailedRunsOnlyAfterAFailureAndWhenFinishedAlwaysRuns() throws {
    let (s, _) = makeScheduler()
    let log = Log()
    let ok = try s.op("ok", log: log)
    let bad = try s.op("bad", 1, .failed, log: log)
    let cleanupAfterOK = try s.op("cleanup-ok", log: log, after: [ok])
    cleanupAfterOK.policy = .failed
    let cleanupAfterBad = try s.op("cleanup-bad", log: log, after: [bad])
    cleanupAfterBad.policy = .failed
    let always = try s.op("always", log: log, after: [bad])
    always.policy = .finished
    try s.runAll()
    #expect(cleanupAfterOK.skipped && cleanupAfterOK.error == "no dependency failed")
    #expect(cleanupAfterBad.succeeded)
    #expect(always.succeeded)
  }

  @Test func cancellingAPendingOperationFinishesItAndSkipsItsDependents() throws {
    let (s, _) = makeScheduler()
    let log = Log()
    let a = try s.op("a", log: log)
    let b = try s.op("b", log: log, after: [a])
    s.cancel(a, reason: "not wanted")
    try s.runAll()
    #expect(a.outcome == .cancelled && a.error == "not wanted" && !a.hasStarted)
    #expect(b.skipped)
    #expect(log.starts.isEmpty)
  }

  @Test func cancellingARunningOperationInterruptsItsBodyOnce() throws {
    let (s, _) = makeScheduler()
    let log = Log()
    let finishes = EventRecorder()
    s.sinks.append(finishes)
    let long = try s.op("long", 100, log: log)
    s.after(2) {
      s.cancel(long); s.cancel(long)
    }
    try s.runAll()
    #expect(long.outcome == .cancelled && long.duration == 2)
    let finishCount = finishes.events.filter { if case .operationFinish = $0 { true } else { false } }.count
    #expect(finishCount == 1)
  }

  @Test func timeoutFailsTheOperationWithATimeoutError() throws {
    let (s, _) = makeScheduler(jobs: 2)
    let slow = try s.op("slow", 100, log: Log())
    slow.timeout = 3
    let quick = try s.op("quick", 1, log: Log())
    quick.timeout = 3
    try s.runAll()
    #expect(slow.failed && slow.error == "timed out after 3 s" && slow.duration == 3)
    #expect(quick.succeeded)
  }

  @Test func interruptCancelsEverythingIncludingCleanup() throws {
    let (s, _) = makeScheduler(jobs: 1)
    let log = Log()
    let running = try s.op("running", 10, log: log)
    let cleanup = try s.op("cleanup", log: log, after: [running])
    cleanup.policy = .finished
    s.after(1) { s.interrupt() }
    try s.runAll()
    #expect(running.outcome == .cancelled && running.error == "interrupted")
    #expect(cleanup.outcome == .cancelled && !cleanup.hasStarted)
    #expect(s.summary.interrupted)
  }

  @Test func finishIsIdempotent() throws {
    let (s, _) = makeScheduler()
    let op = try s.makeOperation(name: "x")
    try s.runAll()
    s.finish(op, .failed, error: "late")
    #expect(op.succeeded && op.error == nil)
  }
}

@Suite struct BackgroundTests {
  @Test func theFirstInterruptSparesBackgroundOperationsForTheirGrace() throws {
    let (s, _) = makeScheduler(jobs: 4)
    let log = Log()
    let upload = try s.op("upload", 3, log: log)
    upload.backgroundGrace = 5
    let short = try s.op("short-grace", 3, log: log)
    short.backgroundGrace = 1
    let other = try s.op("other", 10, log: log)
    s.after(1) { s.interrupt() }
    try s.runAll()
    #expect(upload.succeeded && upload.finishTime == 3)
    #expect(short.outcome == .cancelled && short.finishTime == 2)
    #expect(short.error == "interrupted: its background grace of 1 s ran out")
    #expect(other.outcome == .cancelled && other.finishTime == 1)
  }

  @Test func aSecondInterruptStopsThemToo() throws {
    let (s, _) = makeScheduler(jobs: 4)
    let upload = try s.op("upload", 10, log: Log())
    upload.backgroundGrace = 30
    s.after(1) { s.interrupt() }
    s.after(2) { s.interrupt() }
    try s.runAll()
    #expect(upload.outcome == .cancelled && upload.finishTime == 2)
  }

  /// Tests share one process: a scheduler told not to kill strays leaves a child it does not
  /// own alone on the second interrupt (with stray killing on, a concurrent test's commands
  /// died with it: their output came back empty).
  @Test func aSecondInterruptSparesChildrenOfOthersWhenStrayKillingIsOff() throws {
    var attributes = posix_spawnattr_t()
    posix_spawnattr_init(&attributes)
    defer { posix_spawnattr_destroy(&attributes) }
    posix_spawnattr_setpgroup(&attributes, 0)  // a group of its own, as a command's
    posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETPGROUP))
    var pid: pid_t = 0
    let argv: [UnsafeMutablePointer<CChar>?] = [strdup("sleep"), strdup("30"), nil]
    defer { argv.forEach { free($0) } }
    #expect(posix_spawnp(&pid, "sleep", nil, &attributes, argv, environ) == 0)
    defer { if kill(pid, SIGKILL) == 0 { waitpid(pid, nil, 0) } }

    let (s, _) = makeScheduler(jobs: 2)
    #expect(!s.killsStrays)
    let upload = try s.op("upload", 10, log: Log())
    upload.backgroundGrace = 30
    s.after(1) { s.interrupt() }
    s.after(2) { s.interrupt() }
    try s.runAll()
    #expect(upload.outcome == .cancelled)
    // A SIGKILL lands a moment after kill() returns: watch the child for half a second.
    var ended: pid_t = 0
    for _ in 0..<50 where ended == 0 {
      ended = waitpid(pid, nil, WNOHANG)
      if ended == 0 { usleep(10_000) }
    }
    #expect(ended == 0, "the other child was killed")
  }
}
