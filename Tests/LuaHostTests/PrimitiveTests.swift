import LuaHost
import TaskEngine
// Yielding primitives in bodies: sleep, sh, wait, run, cancelled, produced operations.
import Testing

@Suite struct PrimitiveTests {
  @Test func sleepAdvancesTimeWithoutBlockingOthers() throws {
    let host = try runLua(
      """
      operation { name = "a", run = function() sleep(5) end }
      operation { name = "b", run = function() sleep(3) end }
      """)
    #expect(host.op("a").duration == 5 && host.op("b").duration == 3)
    #expect(host.scheduler.elapsed == 5)
  }

  @Test func shReturnsItsResultAndRaisesOnFailureUnlessUnchecked() throws {
    let host = try runLua(
      """
      operation { name = "x", run = function()
        local r = sh("echo $GREETING", { env = { GREETING = "hi" } })
        assert(r.status == 0 and r.stdout == "hi\\n", r.stdout)
        assert(sh({ "pwd" }, { cwd = "/tmp" }).stdout == "/tmp\\n")
        assert(sh("exit 4", { check = false }).status == 4)
        ok, message = pcall(sh, "echo oops >&2; exit 2")
      end }
      """, realTime: true)
    try host.check(
      """
      assert(not ok and message == "spec.lua:6: command failed: echo oops >&2; exit 2: exited with status 2 (oops)", message)
      """)
  }

  @Test func primitivesRaiseAtTheCallersLineForBadArguments() throws {
    let host = try runLua(
      """
      operation { name = "x", run = function()
        sleep("soon")
      end }
      operation { name = "y", run = function() sh(42) end }
      operation { name = "z", run = function() wait("x") end }
      """)
    #expect(
      host.op("x").error
        == "spec.lua:2: bad argument #1 to 'sleep' (a finite number of seconds ≥ 0 expected, got string)")
    #expect(
      host.op("y").error == "spec.lua:4: bad argument #1 to 'sh' must be a command string or an argv list (got number)")
    #expect(host.op("z").error == "spec.lua:5: bad argument #1 to 'wait' (operation expected, got string)")
  }

  @Test func primitivesWorkInsidePcallAndInsideTheScriptsOwnCoroutines() throws {
    let host = try runLua(
      """
      operation { name = "x", run = function()
        assert(pcall(sleep, 1))
        local gen = coroutine.wrap(function()
          for i = 1, 3 do
            coroutine.yield(sh({ "echo", tostring(i) }).stdout)
          end
        end)
        got = gen() .. gen() .. gen()
      end }
      """, realTime: true)
    try host.check("assert(got == '1\\n2\\n3\\n', got)")
  }

  @Test func waitReturnsResultsAndRaisesWhenADependencyFailed() throws {
    let host = try runLua(
      """
      a = operation { name = "a", run = function() sleep(1) return "A" end }
      b = operation { name = "b", run = function() return "B" end }
      bad = operation { name = "bad", run = function() error("nope") end }
      operation { name = "waiter", run = function()
        r1, r2 = wait(a, b)
        ok, message = pcall(wait, bad)
      end }
      """)
    try host.check(
      """
      assert(r1 == "A" and r2 == "B")
      assert(not ok and message == "spec.lua:6: 'bad' failed: spec.lua:3: nope", message)
      """)
  }

  @Test func waitingOnAnOperationThatWaitsOnYouIsADeadlock() throws {
    let host = try runLua(
      """
      local a, b
      a = operation { name = "a", run = function() wait(b) end }
      b = operation { name = "b", run = function() sleep(1) wait(a) end }
      """)
    #expect(host.op("b").error == "spec.lua:3: deadlock: 'b' waits for 'a', which waits for 'b'")
    #expect(host.op("a").failed)
  }

  @Test func waitingOnYourOwnDependentIsADeadlock() throws {
    let host = try runLua(
      """
      first = operation { name = "first", run = function() second:wait() end }
      second = operation { name = "second", after = { first } }
      """)
    #expect(host.op("first").error == "spec.lua:1: deadlock: 'first' waits for 'second', which waits for 'first'")
  }

  @Test func operationsCreatedByABodyJoinTheRunningGraph() throws {
    let host = try runLua(
      """
      operation { name = "producer", run = function()
        local children = {}
        for i = 1, 3 do
          children[i] = operation { name = "child" .. i, after = { i > 1 and ("child" .. (i - 1)) or nil },
                                    run = function() sleep(1) return i * 10 end }
        end
        total = 0
        for _, child in ipairs(children) do total = total + child:wait() end
      end }
      """)
    try host.check("assert(total == 60, total)")
    #expect(host.op("child3").startTime == 2)
  }

  @Test func cancellingABodyInterruptsItsSleepAndCannotBeSwallowed() throws {
    let host = try runLua(
      """
      victim = operation { name = "victim", run = function()
        local ok, message = pcall(sleep, 100)
        first_error = message
        while true do end   -- the hook stops it even though the sleep's error was caught
      end }
      operation { name = "canceller", run = function() sleep(1) victim:cancel("enough") end }
      """)
    try host.check(
      """
      assert(first_error == "spec.lua:2: enough", first_error)
      assert(victim.cancelled and not victim.failed and victim.error == "enough")
      """)
  }

  @Test func cancelledReportsCancellationToCooperativeBodies() throws {
    let host = try runLua(
      """
      worker = operation { name = "worker", run = function()
        seen = cancelled()
        pcall(sleep, 10)
        seen_after = cancelled()
      end }
      operation { name = "stopper", run = function() sleep(1) worker:cancel() end }
      """)
    try host.check("assert(seen == false and seen_after == true)")
  }

  @Test func aCPUBoundBodyIsTimeSlicedSoOthersProgress() throws {
    let host = try runLua(
      """
      operation { name = "spin", timeout = 1, run = function() while true do end end }
      operation { name = "ticker", run = function() for i = 1, 5 do sleep(0.02) end end }
      """, realTime: true)
    #expect(host.op("ticker").succeeded)
    #expect(host.op("spin").error == "timed out after 1 s")
  }

  /// The scheduler's thread watches the commands' pipes and exits itself: a body that keeps
  /// it busy (time-sliced, never idle) must not hold up noticing that a command ended.
  @Test func aCommandEndsWhileABodyKeepsTheSchedulerBusy() throws {
    let host = try runLua(
      """
      operation { name = "spin", run = function() local t = os.clock() while os.clock() - t < 1.5 do end end }
      cmd = operation { name = "cmd", sh = "echo done" }
      """, jobs: 2, realTime: true)
    try host.check("assert(cmd.result.stdout == 'done\\n', cmd.result.stdout)")
    let spin = host.op("spin"), cmd = host.op("cmd")
    #expect(cmd.finishTime! < spin.finishTime! - 0.5, "cmd \(cmd.finishTime!) s, spin \(spin.finishTime!) s")
  }

  @Test func aLoopInsideTheBodysOwnCoroutineIsStillInterrupted() throws {
    let host = try runLua(
      """
      operation { name = "inner", timeout = 0.2, run = function()
        coroutine.wrap(function() while true do pcall(function() while true do end end) end end)()
      end }
      """, realTime: true)
    #expect(host.op("inner").error == "timed out after 0.20 s")
  }

  @Test func runFromTheScriptRunsNowAndReportsFailures() throws {
    let host = try runLua(
      """
      good = operation { name = "good", run = function() return 1 end }
      bad = operation { name = "bad", sh = "exit 3" }
      ok1 = run(good)
      ok2, summary = run(bad)
      state_after_run = good.state
      """)
    try host.check(
      """
      assert(ok1 == true and state_after_run == "finished")
      assert(ok2 == false and summary == "bad failed: exited with status 3: exit 3", summary)
      """)
  }

  @Test func scriptArgumentsArriveInArg() throws {
    let host = try runLua("args = table.concat(arg, ' ')")
    try host.check("assert(args == 'one two')")
  }

  @Test func theCollectorIsGenerationalUntilTheScriptSaysOtherwise() throws {
    let host = try runLua(
      """
      first = collectgarbage("incremental")
      second = collectgarbage("generational")
      """)
    try host.check("assert(first == 'generational' and second == 'incremental', tostring(first))")
  }
}
