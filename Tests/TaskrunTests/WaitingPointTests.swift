// One Ctrl-C (SIGINT, SIGTERM, SIGHUP) stops a run wherever it waits, and nothing starts after it.
import Foundation
import Testing

@Suite(.serialized) struct WaitingPointTests {
  /// Runs `script` (with `env` for marked commands), sends `signal` once the run is under
  /// way, and checks what every waiting point owes: exit 130, `interrupted` in `run_finish`
  /// when there was a run (unless it was over before the signal), no start after the signal, the script's next line never reached,
  /// no process left, and all of it promptly.
  func expectInterrupted(
    _ signal: Int32 = SIGINT, wait: Double = 0.4, arguments: [String] = [],
    runOver: Bool = false, _ script: (String) -> String
  ) throws {
    let w = try MarkedWorkflow(script)
    let started = try w.start(arguments)
    usleep(UInt32(wait * 1e6))
    let sent = Date()
    kill(started.child.pid, signal)
    let run = Binary.finish(started, timeout: 15)
    let took = Date().timeIntervalSince(sent)
    #expect(run.status == 130, "\(run.stdout)\(run.stderr)")
    #expect(took < 4, "stopping took \(took) s")
    let events = w.events()
    let interruptedAt = events.firstIndex { $0["error_kind"] as? String == "interrupted" }
    if let finish = events.last(where: { $0["event"] as? String == "run_finish" }) {
      #expect(finish["interrupted"] as? Bool == !runOver)
    }
    if let interruptedAt {
      let late = events[interruptedAt...].filter { $0["event"] as? String == "op_start" }
      #expect(late.isEmpty, "started after the interrupt: \(late)")
    }
    #expect(
      !FileManager.default.fileExists(atPath: w.dir.appendingPathComponent("went-on").path),
      "the script went on after the interrupt")
    #expect(w.survivors(after: 0.5).isEmpty)
  }

  @Test(arguments: [SIGINT, SIGTERM, SIGHUP])
  func aTopLevelCommand(_ signal: Int32) throws {
    try expectInterrupted(signal) { env in
      """
      operation { name = "declared", sh = "true" }
      pcall(sh, "sleep 30", { \(env) })
      io.open("went-on", "w"):close()
      """
    }
  }

  @Test func aTopLevelSleep() throws {
    try expectInterrupted { _ in "sleep(30)\nio.open('went-on', 'w'):close()" }
  }

  @Test func aTopLevelWait() throws {
    try expectInterrupted { env in
      """
      local nap = operation { name = "nap", \(env), sh = "sleep 30" }
      operation { name = "after", after = { nap }, sh = "true" }
      pcall(wait, nap)
      io.open("went-on", "w"):close()
      """
    }
  }

  @Test func anOperationWaitingForItsNextAttempt() throws {
    let w = try MarkedWorkflow { _ in #"operation { name = "flaky", sh = "false", retry = { max = 5, delay = 3 } }"# }
    let started = try w.start()
    usleep(500_000)
    kill(started.child.pid, SIGINT)
    let run = Binary.finish(started, timeout: 15)
    #expect(run.status == 130, "\(run.stdout)\(run.stderr)")
    let starts = w.events().filter { $0["event"] as? String == "op_start" }
    #expect(starts.count == 1, "another attempt started after the interrupt")
  }

  @Test func aCPUBoundBody() throws {
    try expectInterrupted(arguments: ["-j2"]) { env in
      """
      operation { name = "spin", run = function() while true do end end }
      operation { name = "spin2", run = function() while true do pcall(function() while true do end end) end end }
      for i = 1, 4 do
        operation { name = "later" .. i, \(env), after = { "spin" }, when = "finished", sh = "sleep 30" }
      end
      """
    }
  }

  @Test func aLoopThatKeepsClearingHooks() throws {
    try expectInterrupted { _ in #"operation { name = "h", run = function() while true do debug.sethook() end end }"# }
    let w = try MarkedWorkflow { _ in
      #"operation { name = "h", timeout = 0.5, run = function() while true do debug.sethook(function() end, "", 1e9) end end }"#
    }
    let run = Binary.finish(try w.start(), timeout: 10)
    #expect(run.status == 1 && run.stderr.contains("timed out after 0.50 s"), "\(run.stderr)")
  }

  @Test(arguments: [["graph"], ["-n"]])
  func aTopLevelLoopWhileOnlyPlanning(_ mode: [String]) throws {
    let w = try MarkedWorkflow { _ in "while true do end" }
    let started = try Binary.start(mode + ["w.lua"], in: w.dir)
    usleep(400_000)
    kill(started.child.pid, SIGINT)
    let run = Binary.finish(started, timeout: 10)
    #expect(run.status == 130, "\(mode): \(run.stdout)\(run.stderr)")
  }

  @Test func aFinalizerThatLoopsAtExit() throws {
    try expectInterrupted(wait: 0.8, runOver: true) { _ in
      """
      -- A __gc that was not a function when the metatable was set is not bounded (see
      -- finalizersTaskrunBounds): only Ctrl-C's escape ends it.
      local mt = { __gc = true }
      gc = setmetatable({}, mt)
      mt.__gc = function() while true do end end
      operation { name = "ok", sh = "true" }
      """
    }
  }

  /// A looping finalizer set with setmetatable is stopped by taskrun's bound, and says so:
  /// the run ends by itself, at exit or during the run.
  @Test func finalizersTaskrunBounds() throws {
    for script in [
      "gc = setmetatable({}, { __gc = function() while true do end end })\noperation { name = \"ok\", sh = \"true\" }\n",
      "setmetatable({}, { __gc = function() while true do end end })\nfor i = 1, 1e5 do local t = {} end\nprint(\"went on\")\n"
    ] {
      let w = try MarkedWorkflow { _ in script }
      let run = Binary.finish(try w.start(), timeout: 30)
      #expect(run.status == 0, "\(run.stdout)\(run.stderr)")
      #expect(run.stderr.contains("taskrun: a __gc finalizer was stopped: "), "\(run.stderr)")
      #expect(run.stderr.contains("million instructions"), "\(run.stderr)")
      if script.contains("went on") { #expect(run.stdout.contains("went on"), "\(run.stdout)") }
    }
  }

  @Test func aFinalizerThatLoopsDuringTheRun() throws {
    let w = try MarkedWorkflow { _ in
      """
      local mt = { __gc = true }
      setmetatable({}, mt)
      mt.__gc = function() while true do end end
      for i = 1, 1e5 do local t = {} end
      """
    }
    let started = try w.start()
    usleep(500_000)
    kill(started.child.pid, SIGINT)
    let run = Binary.finish(started, timeout: 10)
    #expect(run.status == 130)
    #expect(run.stderr.contains("cannot be interrupted"), "\(run.stderr)")
  }

  @Test(arguments: [0, 2_000, 10_000, 30_000, 60_000])
  func aSignalSoonAfterStart(_ microseconds: UInt32) throws {
    let w = try MarkedWorkflow { env in #"operation { name = "s", \#(env), sh = "sleep 5" }"# }
    let started = try w.start()
    if microseconds > 0 { usleep(microseconds) }
    kill(started.child.pid, SIGTERM)
    var status: Int32 = 0
    let deadline = Date().addingTimeInterval(10)
    while waitpid(started.child.pid, &status, WNOHANG) == 0 && Date() < deadline { usleep(5_000) }
    // Killed by the default action only while the dynamic loader still works (a few ms).
    let killed = status & 0x7f
    if microseconds >= 30_000 { #expect(killed == 0 && (status >> 8) & 0xff == 130, "status \(status)") }
    #expect(killed != 0 || (status >> 8) & 0xff == 130)
    #expect(w.survivors(after: 1).isEmpty)
  }

  @Test func theFirstCtrlCSaysWhatHappensAndTheSecondKills() throws {
    let w = try MarkedWorkflow { env in
      """
      operation { name = "stubborn", \(env), sh = { "sh", "-c", "trap '' TERM; sleep 30" } }
      """
    }
    let started = try w.start()
    Events.waitForStarts(w.dir.appendingPathComponent("events.jsonl"))
    usleep(200_000)
    kill(started.child.pid, SIGINT)
    usleep(300_000)
    kill(started.child.pid, SIGINT)
    let run = Binary.finish(started, timeout: 10)
    #expect(run.status == 130)
    // taskrun's own notes go where its others (and `Cancelled:`) go: standard error.
    #expect(run.stderr.contains("taskrun: stopping…; Ctrl-C again to kill"), "\(run.stderr)")
    #expect(run.stderr.contains("taskrun: killing…"))
    #expect(!run.stdout.contains("taskrun: stopping…") && !run.stdout.contains("taskrun: killing…"), "\(run.stdout)")
    #expect(w.survivors(after: 0.5).isEmpty)
  }

  @Test func aConditionThatReturnsItselfOrItsPartner() throws {
    let w = try MarkedWorkflow { _ in
      """
      local self_ref, a, b
      self_ref = condition { name = "self", evaluate = function() return self_ref end }
      a = condition { name = "a", evaluate = function() return b end }
      b = condition { name = "b", evaluate = function() return a end }
      operation { name = "x", conditions = { self_ref }, sh = "true" }
      operation { name = "y", conditions = { a }, sh = "true" }
      """
    }
    let run = Binary.finish(try w.start(["-k"]), timeout: 10)
    #expect(run.status == 1)
    #expect(run.stderr.contains("the conditions loop ('self' returns 'self')"), "\(run.stderr)")
    #expect(run.stderr.contains("the conditions loop ('a' returns 'b' returns 'a')"))
  }

  @Test func aDeadlockOnAMutexIsReportedAtOnceWithTheMutexAndItsHolder() throws {
    let w = try MarkedWorkflow { _ in
      """
      operation { name = "quick", timeout = 3600, sh = "true" }
      local needs
      operation { name = "holder", conditions = { mutex "m" }, run = function() wait(needs) end }
      needs = operation { name = "needs", conditions = { mutex "m" }, run = function() end }
      """
    }
    let begun = Date()
    let run = Binary.finish(try w.start(), timeout: 20)
    #expect(run.status == 1)
    #expect(Date().timeIntervalSince(begun) < 5)
    #expect(run.stdout.contains("waits for mutex 'm' (held by 'holder')"), "\(run.stdout)")
    #expect(!run.stdout.contains("has no room"))
  }
}
