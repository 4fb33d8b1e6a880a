// Progress as the handle on the work: cancel, pause and resume reach operations through their
// progress, implicit composition adopts operations, cleanups, timeouts that retry or cancel.
// On the manual clock: time moves only when everything waits.
import LuaHost
import TaskEngine
import Testing

@Suite struct ProgressHandleTests {
  @Test func cancellingAnOperationCancelsItsProgressAndTheBodysTree() throws {
    let host = try runLua(
      """
      fired = {}
      local slow = operation { name = "slow", run = function(op)
        local p = progress { total = 4 }
        p.on_cancel = function() fired[#fired + 1] = "body tree" end
        sleep(10)
      end }
      slow.progress.on_cancel = function() fired[#fired + 1] = "op progress" end
      operation { name = "canceller", run = function() sleep(1); slow:cancel("enough") end }
      """)
    try host.check(#"assert(table.concat(fired, ",") == "op progress,body tree", table.concat(fired, ","))"#)
    let slow = host.op("slow")
    #expect(slow.outcome == .cancelled && slow.error == "enough" && slow.progress.isCancelled)
  }

  @Test func cancellingTheProgressCancelsTheOperationAsOpCancelDoes() throws {
    let host = try runLua(
      """
      local running = operation { name = "running", run = function() sleep(10) end }
      local waiting = operation { name = "waiting", after = { "gate" }, run = function() end }
      operation { name = "gate", run = function() sleep(2) end }
      operation { name = "canceller", run = function()
        sleep(1)
        running.progress:cancel()
        waiting.progress:cancel()
      end }
      """)
    for name in ["running", "waiting"] {
      let op = host.op(name)
      #expect(op.outcome == .cancelled && op.error == "cancelled" && op.errorKind == .cancelled, "\(name)")
    }
    #expect(host.op("gate").succeeded)
  }

  @Test func aProgressThatIsNotCancellableDoesNotCancelItsOperation() throws {
    let host = try runLua(
      """
      local op = operation { name = "kept", run = function() sleep(2) end }
      op.progress.cancellable = false
      operation { name = "canceller", run = function() sleep(1); op.progress:cancel() end }
      """)
    #expect(host.op("kept").succeeded && host.op("kept").progress.isCancelled)
  }

  @Test func cancellingAParentProgressReachesTheOperationsItComposes() throws {
    let host = try runLua(
      """
      local album = progress { total = 2 }
      local a = operation { name = "a", run = function() sleep(5) end }
      local b = operation { name = "b", run = function() sleep(5) end }
      album:add_child(a.progress, 1)
      album:add_child(b.progress, 1)
      operation { name = "canceller", run = function() sleep(1); album:cancel() end }
      """)
    #expect(host.op("a").outcome == .cancelled && host.op("b").outcome == .cancelled)
  }

  @Test func aPausedBodyStopsAtItsNextYieldingCallUntilResumed() throws {
    let host = try runLua(
      """
      ticks = {}
      local worker = operation { name = "worker", run = function()
        for i = 1, 4 do sleep(1); ticks[#ticks + 1] = i end
      end }
      operation { name = "driver", run = function()
        sleep(1.5)
        worker.progress:pause()
        at_pause = #ticks
        sleep(10)
        during = #ticks
        paused_state = worker.state
        worker.progress:resume()
      end }
      """)
    try host.check(
      """
      assert(at_pause == 1 and during == 1, ("ticks at pause %d, after 10 s paused %d"):format(at_pause, during))
      assert(paused_state == "executing")
      assert(#ticks == 4)
      """)
    #expect(host.op("worker").succeeded)
    #expect(host.op("worker").duration! >= 13, "the pause is part of its time: \(host.op("worker").duration!)")
  }

  @Test func aPausedOperationThatHasNotStartedWaitsForItsResume() throws {
    let host = try runLua(
      """
      order = {}
      local later = operation { name = "later", run = function() order[#order + 1] = "later" end }
      later.progress:pause()
      operation { name = "first", run = function()
        sleep(2)
        order[#order + 1] = "first"
        later.progress:resume()
      end }
      """)
    try host.check(#"assert(table.concat(order, ",") == "first,later", table.concat(order, ","))"#)
    #expect(host.op("later").succeeded && host.op("later").startTime! >= 2)
  }

  @Test func pausingTheOperationPausesItsProgressAndViewsSeeIt() throws {
    let host = try runLua(
      """
      local w = operation { name = "w", run = function() sleep(3) end }
      operation { name = "driver", run = function()
        sleep(1)
        w.progress:pause()
        seen = { w.progress.paused, tostring(w.progress):find("paused") ~= nil }
        w.progress:resume()
      end }
      """)
    try host.check("assert(seen[1] and seen[2])")
  }

  @Test func aTimeoutDoesNotCountPausedTime() throws {
    let host = try runLua(
      """
      local w = operation { name = "w", timeout = 3, run = function() sleep(1); sleep(1) end }
      operation { name = "driver", run = function()
        sleep(0.5)
        w.progress:pause()
        sleep(20)
        w.progress:resume()
      end }
      """)
    #expect(host.op("w").succeeded, "\(host.op("w").error ?? "")")
  }

  @Test func becomeCurrentAdoptsTheNextOperationDeclared() throws {
    let host = try runLua(
      """
      root = progress { total = 10 }
      root:become_current(4)
      local op = operation { name = "adopted", run = function() sleep(1) end }
      local other = operation { name = "not adopted", run = function() end }
      root:resign_current()
      adopted = op.progress.parent == root
      other_parent = other.progress.parent
      before = root.completed
      """)
    try host.check(
      """
      assert(adopted and other_parent == nil)
      assert(before == 0, "resign_current does not count the adopted operation's units as done")
      assert(root.completed == 4 and root.fraction == 0.4, root.completed .. " " .. root.fraction)
      """)
  }

  @Test func anOperationDeclaredInABodyIsNotAdoptedByTheBodysOwnProgress() throws {
    let host = try runLua(
      """
      operation { name = "producer", run = function(op)
        local child = operation { name = "child", run = function() end }
        parent_of_child = child.progress.parent
        wait(child)
      end }
      """)
    try host.check("assert(parent_of_child == nil)")
    #expect(host.op("producer").progress.isFinished)
  }
}

@Suite struct CleanupTests {
  @Test func aCleanupRunsAfterAFailureWithWhyAndTheMessage() throws {
    let host = try runLua(
      """
      operation { name = "f", run = function() error("broke", 0) end,
        cleanup = function(op, why, message) seen = { why, message, op.state } end }
      """)
    try host.check(
      #"assert(seen[1] == "failed" and seen[2] == "broke" and seen[3] == "executing", table.concat(seen, "|"))"#)
    #expect(host.op("f").failed && host.op("f").error == "broke")
  }

  @Test func aCleanupMayWaitAfterACancelAndTheOperationEndsCancelled() throws {
    let host = try runLua(
      """
      local slow = operation { name = "slow", run = function() sleep(10) end,
        cleanup = function(op, why)
          sleep(1)  -- would raise "cancelled" in the body
          seen = { why, op.cancelled }
        end }
      operation { name = "canceller", run = function() sleep(1); slow:cancel() end }
      """)
    try host.check(#"assert(seen[1] == "cancelled" and seen[2] == true)"#)
    let slow = host.op("slow")
    #expect(slow.outcome == .cancelled && slow.duration! >= 2, "the cleanup's time is the operation's")
  }

  @Test func aCleanupRunsForEachTimedOutAttemptAndTheLastOneFails() throws {
    let host = try runLua(
      """
      whys = {}
      operation { name = "t", timeout = 1, retries = 2, run = function() sleep(5) end,
        cleanup = function(op, why) whys[#whys + 1] = why .. op.attempt end }
      """)
    try host.check(#"assert(table.concat(whys, ",") == "timeout1,timeout2,timeout3", table.concat(whys, ","))"#)
    let t = host.op("t")
    #expect(t.failed && t.errorKind == .timeout && t.attempt == 3)
  }

  @Test func aCleanupThatOutlivesItsGraceIsStopped() throws {
    let host = try runLua(
      """
      operation { name = "f", run = function() error("broke", 0) end, cleanup_grace = 2,
        cleanup = function() sleep(100); never = true end }
      """)
    try host.check("assert(never == nil)")
    let f = host.op("f")
    #expect(f.failed && f.error == "broke" && f.duration! < 3)
  }

  @Test(arguments: [
    ("cleanup = 3", "field 'cleanup' must be a function (got number)"),
    ("cleanup_grace = 1", "'cleanup_grace' needs a 'cleanup' function"),
    ("cleanup = function() end, cleanup_grace = -1", "field 'cleanup_grace' must be from 0 to")
  ])
  func badCleanupFieldsAreRefused(_ field: String, _ message: String) {
    let error = loadError("operation { name = 'x', run = function() end, \(field) }") ?? ""
    #expect(error.contains("spec.lua:1: operation 'x': ") && error.contains(message), "\(error)")
  }
}

@Suite struct TimeoutRetryTests {
  @Test func aTimedOutAttemptIsTriedAgainWhileRetriesRemain() throws {
    let host = try runLua(
      """
      operation { name = "t", timeout = 1, retries = 2, run = function(op)
        if op.attempt < 3 then sleep(5) end
      end }
      """)
    #expect(host.op("t").succeeded && host.op("t").attempt == 3)
  }

  @Test func theTimeoutObserverThatCancelsIsNotRetried() throws {
    let host = try runLua(
      """
      operation { name = "t", retries = 3, observers = { timeout(1, { cancel = true }) }, run = function() sleep(5) end }
      """)
    let t = host.op("t")
    #expect(t.outcome == .cancelled && t.attempt == 1 && t.error == "timed out after 1 s", "\(t.error ?? "")")
  }

  @Test func theTimeoutFieldFailsAndRetriesBesideALongerCancellingObserver() throws {
    let host = try runLua(
      """
      operation { name = "t", timeout = 1, retries = 2, observers = { timeout(100, { cancel = true }) },
        run = function() sleep(5) end }
      operation { name = "c", timeout = 100, retries = 2, observers = { timeout(1, { cancel = true }) },
        run = function() sleep(5) end }
      """)
    #expect(host.op("t").failed && host.op("t").attempt == 3 && host.op("t").errorKind == .timeout)
    #expect(host.op("c").outcome == .cancelled && host.op("c").attempt == 1)
  }

  @Test func whySaysAnOperationIsPaused() throws {
    let host = try runLua(
      """
      local later = operation { name = "later", run = function() end }
      later.progress:pause()
      operation { name = "looker", run = function() sleep(1); said = later:why(); later.progress:resume() end }
      """)
    try host.check(
      #"assert(said == "'later' is paused (before it started): it goes on when its progress is resumed", said)"#)
  }

  @Test func theTimeoutObserversOptionsAreChecked() {
    #expect(loadError("timeout(1, { cancel = 1 })")?.contains("'cancel' must be a boolean") == true)
    #expect(loadError("timeout(1, { cancels = true })")?.contains("unknown field 'cancels'") == true)
    #expect(loadError("timeout(1, 5)")?.contains("bad argument #2 to 'timeout'") == true)
  }
}
