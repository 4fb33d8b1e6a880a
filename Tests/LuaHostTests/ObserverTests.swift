import LuaHost
import TaskEngine
// Observers from Lua: activity indicators and timeouts.
import Testing

final class ActivityRecorder: EventSink {
  var counts: [String] = []
  func receive(_ event: RunEvent) {
    if case .activity(_, let label, let count) = event { counts.append("\(label)=\(count)") }
  }
}

@Suite struct ObserverTests {
  @Test func activityCountsTheOperationsExecutingWithIt() throws {
    let scheduler = Scheduler(clock: ManualClock(), jobs: 8)
    let recorder = ActivityRecorder()
    scheduler.sinks.append(recorder)
    let host = ScriptHost(scheduler: scheduler)
    try host.execute(
      source: """
        for i = 1, 3 do
          operation { name = "fetch" .. i, observers = { activity "network" }, run = function() sleep(i) end }
        end
        local upload = operation { name = "upload", run = function() sleep(1) end }
        upload:add_observer(activity "network")
        upload:add_observer(activity "disk")
        assert(upload.activities[1] == "network" and upload.activities[2] == "disk")
        assert(tostring(activity "network") == "<observer activity network>")
        """, name: "@spec.lua")
    _ = host.run(try host.select(targets: []))
    #expect(
      recorder.counts == [
        "network=1", "network=2", "network=3", "network=4", "disk=1",
        "network=3", "network=2", "disk=0", "network=1", "network=0"
      ])
  }

  @Test func aTimeoutObserverFailsTheOperationWithATimeoutError() throws {
    let host = try runLua(
      """
      operation { name = "slow", observers = { timeout(2) }, run = function() sleep(100) end }
      operation { name = "both", timeout = 5, observers = { timeout(3) }, run = function() sleep(100) end }
      """)
    #expect(host.op("slow").error == "timed out after 2 s" && host.op("slow").failed)
    #expect(host.op("both").error == "timed out after 3 s", "the shorter timeout wins")
  }

  @Test func observersAreCheckedWhereTheyAreGiven() {
    #expect(
      loadError("operation { name = 'x', observers = { 'network' } }")
        == "spec.lua:1: operation 'x': observers are made by observer{}, activity(label), timeout(seconds) or background(grace) (got string)"
    )
    #expect(
      loadError("operation { observers = 3 }")
        == "spec.lua:1: operation: field 'observers' must be a list of observers (got number)")
    #expect(
      loadError("operation { observers = { on_finish = function() end } }")  // observer{} forgotten
        == "spec.lua:1: operation: field 'observers' must be a list of observers (got a table with the key 'on_finish')"
    )
    #expect(
      loadError("activity ''") == "spec.lua:1: bad argument #1 to 'activity' (non-empty string expected, got string)")
    #expect(
      loadError("local a = operation { name = 'a' }; run(a); a:add_observer(activity 'x')")
        == "spec.lua:1: cannot add an observer to 'a': it already finished")
  }
}

@Suite struct RetryTests {
  @Test func aFailedBodyIsTriedAgainUntilItSucceeds() throws {
    let host = try runLua(
      """
      tries = 0
      flaky = operation { name = "flaky", retries = 2, run = function()
        tries = tries + 1
        if tries < 3 then error("try " .. tries .. " failed") end
        return "ok on " .. tries
      end }
      """)
    try host.check("assert(flaky.succeeded and flaky.result == 'ok on 3' and flaky.attempt == 3, flaky.error)")
  }

  @Test func retriesRunOutAndTheLastErrorStands() throws {
    let host = try runLua(
      """
      operation { name = "broken", retry = { max = 2, delay = 1, backoff = "exponential" }, sh = "exit 7" }
      """, realTime: false)
    let broken = host.op("broken")
    #expect(broken.failed && broken.attempt == 3 && broken.error == "exited with status 7: exit 7")
    #expect(host.scheduler.elapsed >= 3, "waited 1 s, then 2 s (exponential)")
  }

  @Test func cancellationStopsRetrying() throws {
    let host = try runLua(
      """
      tries = 0
      victim = operation { name = "victim", retry = { max = 5, delay = 10 }, run = function()
        tries = tries + 1
        error("nope")
      end }
      operation { name = "canceller", run = function() sleep(2) victim:cancel("given up") end }
      """)
    try host.check("assert(tries == 1 and victim.cancelled and victim.error == 'given up', tries)")
  }

  @Test func retrySpecsAreChecked() {
    #expect(
      loadError("operation { retry = { max = 2, backof = 'x' } }")
        == "spec.lua:1: operation retry: unknown field 'backof'; did you mean 'backoff'? (valid fields: max, delay, backoff)"
    )
    #expect(
      loadError("operation { retries = 1, retry = { max = 1 } }")
        == "spec.lua:1: operation: give either 'retries' or 'retry', not both")
    #expect(
      loadError("operation { retries = -1 }")
        == "spec.lua:1: operation: field 'retries' must be a whole number from 0 to 1000000 (got -1)")
  }
}

@Suite struct LuaObserverTests {
  @Test func observersHearStartProduceAndFinishOnceEachInOrder() throws {
    let host = try runLua(
      """
      log = {}
      local watch = observer {
        on_start = function(op) log[#log + 1] = "start " .. op.name end,
        on_produce = function(op, new) log[#log + 1] = op.name .. " produced " .. new.name end,
        on_finish = function(op, err) log[#log + 1] = "finish " .. op.name .. " " .. tostring(err) end }
      operation { name = "parent", observers = { watch }, run = function()
        operation { name = "child", run = function() end }
        sleep(1)
      end }
      bad = operation { name = "bad", run = function() error("boom") end }
      bad:add_observer(watch)
      """, jobs: 1)
    try host.check(
      """
      local text = table.concat(log, "; ")
      assert(text == "start parent; parent produced child; finish parent nil; start bad; finish bad spec.lua:10: boom", text)
      """)
  }

  @Test func anObserverThatFailsDoesNotBreakTheRun() throws {
    let host = try runLua(
      """
      operation { name = "x", observers = { observer { on_start = function() error("oops") end } } }
      """)
    #expect(host.op("x").succeeded)
  }
}
