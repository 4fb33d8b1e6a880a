// Observers from Lua: activity indicators and timeouts.
import Testing
import LuaHost
import TaskEngine

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
    try host.execute(source: """
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
    #expect(recorder.counts == ["network=1", "network=2", "network=3", "network=4", "disk=1",
                                "network=3", "network=2", "disk=0", "network=1", "network=0"])
  }

  @Test func aTimeoutObserverFailsTheOperationWithATimeoutError() throws {
    let host = try runLua("""
      operation { name = "slow", observers = { timeout(2) }, run = function() sleep(100) end }
      operation { name = "both", timeout = 5, observers = { timeout(3) }, run = function() sleep(100) end }
      """)
    #expect(host.op("slow").error == "timed out after 2 s" && host.op("slow").failed)
    #expect(host.op("both").error == "timed out after 3 s", "the shorter timeout wins")
  }

  @Test func observersAreCheckedWhereTheyAreGiven() {
    #expect(loadError("operation { name = 'x', observers = { 'network' } }")
      == "spec.lua:1: operation 'x': observers are made by activity(label) or timeout(seconds) (got string)")
    #expect(loadError("operation { observers = 3 }")
      == "spec.lua:1: operation: field 'observers' must be a list of observers (got number)")
    #expect(loadError("activity ''") == "spec.lua:1: bad argument #1 to 'activity' (non-empty string expected, got string)")
    #expect(loadError("local a = operation { name = 'a' }; run(a); a:add_observer(activity 'x')")
      == "spec.lua:1: cannot add an observer to 'a': it already finished")
  }
}
