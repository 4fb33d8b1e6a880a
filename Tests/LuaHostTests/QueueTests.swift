import LuaHost
import TaskEngine
// queue{}: limits, suspension, cancel_all and waiting from Lua.
import Testing

@Suite struct QueueTests {
  @Test func aQueueLimitsItsOwnOperations() throws {
    let host = try runLua(
      """
      net = queue { name = "net", max_concurrent = 2 }
      for i = 1, 4 do operation { name = "fetch" .. i, queue = net, run = function() sleep(1) end } end
      """, jobs: 8)
    #expect(host.scheduler.elapsed == 2)
    try host.check(
      "assert(net.count == 0 and net.max_concurrent == 2 and #net.operations == 0 and #net.all_operations == 4)")
  }

  @Test func aBodyMayMakeAQueueAndRunWorkOnIt() throws {
    // The body starts inside the scheduler's pass over the queues; the new queue's work
    // must still start (it was once cancelled as "has no room").
    let host = try runLua(
      """
      operation { name = "outer", run = function()
        local lane = queue { name = "lane", max_concurrent = 2 }
        inner = operation { name = "inner", queue = lane, run = function() return "ran" end }
        assert(run(inner))
      end }
      """)
    #expect(host.op("outer").succeeded)
    #expect(host.op("inner").succeeded)
    try host.check("assert(inner.result == 'ran')")
  }

  @Test func maxConcurrentIsSettableAndSuspensionHoldsWork() throws {
    let host = try runLua(
      """
      q = queue { name = "q", suspended = true }
      q.max_concurrent = 1
      for i = 1, 3 do operation { name = "job" .. i, queue = q, run = function() sleep(1) end } end
      operation { name = "opener", run = function() sleep(5) q:resume() end }
      """)
    #expect(host.op("job1").startTime == 5)
    #expect(host.scheduler.elapsed == 8)
  }

  @Test func cancelAllAndWaitOnAQueue() throws {
    let host = try runLua(
      """
      q = queue { name = "q", max_concurrent = 1 }
      for i = 1, 3 do operation { name = "job" .. i, queue = q, run = function() sleep(10) end } end
      operation { name = "boss", run = function() sleep(1) q:cancel_all("shutdown") q:wait() done = q.count end }
      """)
    try host.check("assert(done == 0)")
    #expect(host.op("job1").error == "shutdown" && host.op("job3").outcome == .cancelled)
  }

  @Test func queueDescriptionsAndErrors() throws {
    let host = try runLua("q = queue { name = 'net', max_concurrent = 3 }")
    try host.check("assert(tostring(q) == '<queue net: 0 operations, 0 running, max 3>', tostring(q))")
    #expect(
      loadError("queue { name = 'x', size = 3 }")
        == "spec.lua:1: queue 'x': unknown field 'size' (valid fields: name, max_concurrent, suspended, executor, slurm)"
    )
    #expect(loadError("queue { name = 'main' }") == "spec.lua:1: a queue named 'main' already exists")
  }
}
