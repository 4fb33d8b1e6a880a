import LuaHost
import TaskEngine
// Hostile values at the Lua boundary: numbers get ranges, handles cannot be forged.
import Testing

@Suite struct HostileValueTests {
  @Test(arguments: [
    (
      "operation { timeout = 0/0, sh = 'true' }",
      "spec.lua:1: operation: field 'timeout' must be a finite number (got nan)"
    ),
    (
      "operation { timeout = 1/0, sh = 'true' }",
      "spec.lua:1: operation: field 'timeout' must be a finite number (got inf)"
    ),
    (
      "operation { weight = -1/0, sh = 'true' }",
      "spec.lua:1: operation: field 'weight' must be a finite number (got -inf)"
    ),
    (
      "operation { weight = 1e300, sh = 'true' }",
      "spec.lua:1: operation: field 'weight' must be from 0 to 1000000000 (got 1e+300)"
    ),
    (
      "operation { retries = 1e300, sh = 'true' }",
      "spec.lua:1: operation: field 'retries' must be a whole number from 0 to 1000000 (got 1e+300)"
    ),
    (
      "operation { retry = { max = 2^63 }, sh = 'true' }",
      "spec.lua:1: operation retry: field 'max' must be a whole number from 0 to 1000000 (got 9.223372036854776e+18)"
    ),
    (
      "operation { retry = { max = 1, delay = 1e300 }, sh = 'true' }",
      "spec.lua:1: operation retry: field 'delay' must be from 0 to 1000000000 seconds (got 1e+300)"
    ),
    (
      "queue { name = 'q', max_concurrent = 2^63 }",
      "spec.lua:1: queue 'q': max_concurrent must be a whole number from 0 to 1000000, or -1 for unlimited (got 9.223372036854776e+18)"
    ),
    (
      "group { name = 'g', weight = 1e300 }",
      "spec.lua:1: group 'g': field 'weight' must be from 0 to 1000000000 (got 1e+300)"
    ),
    (
      "reachable('localhost', 1, 3e6)",
      "spec.lua:1: bad argument #3 to 'reachable' (number of seconds from 0 to 3600 expected, got 3000000.0)"
    ),
    (
      "os.exit(1e300)",
      "spec.lua:1: bad argument #1 to 'exit' (an exit status from 0 to 255 or a boolean expected, got 1e+300)"
    )
  ])
  func outOfRangeNumbersAreClearErrors(_ source: String, _ message: String) {
    #expect(loadError(source) == message)
  }

  @Test func durationsBeyondTheLimitMeanNever() throws {
    let host = try runLua(
      """
      operation { name = "forever", timeout = 1e10, run = function() sleep(5) end }
      operation { name = "observed", observers = { timeout(1e12) }, run = function() sleep(5) end }
      operation { name = "sleeper", timeout = 1, run = function() sleep(1e300) end }
      """)
    #expect(host.op("forever").succeeded && host.op("forever").timeout == nil)
    #expect(host.op("observed").succeeded)
    #expect(host.op("sleeper").failed && host.op("sleeper").error == "timed out after 1 s")
  }

  @Test func progressNumbersCapturedFromOutputSaturate() throws {
    let host = try runLua(
      """
      operation { name = "hash", sh = "echo 123456789012345678901234/5", progress = "(%d+)/(%d+)" }
      """, realTime: true)
    #expect(host.op("hash").succeeded)
  }

  @Test func aTamperedTimeoutObserverIsRefused() {
    #expect(loadError("local t = timeout(1) t.seconds = 0/0") == "spec.lua:1: an observer cannot be changed")
    #expect(
      loadError("local t = timeout(1) rawset(t, 'seconds', 0/0)")?.contains("table expected, got observer") == true)
  }

  @Test(arguments: [
    "local p = progress {} rawset(p, next(p), 1000) return p.total",
    "local p = progress {} rawset(p, next(p), -1) p.completed = 3",
    "local p = progress {} debug.setmetatable(5, debug.getmetatable(p)) return (5).total",
    "local op = operation { name = 'x' } debug.setmetatable(io.stdout, debug.getmetatable(op)) return io.stdout.name",
    "local c = mutex 'm' debug.setmetatable(io.stdout, debug.getmetatable(c)) operation { conditions = { io.stdout } }",
    "local o = activity 'net' debug.setmetatable(io.stderr, debug.getmetatable(o)) operation { observers = { io.stderr } }",
    "local c = mutex 'm' debug.setmetatable(activity 'a', debug.getmetatable(c)) operation { conditions = { activity 'a' } }"
  ])
  func forgedHandlesAreErrorsNotCrashes(_ source: String) {
    let message = loadError(source)
    #expect(message?.hasPrefix("spec.lua:1: ") == true, "\(message ?? "no error")")
  }

  @Test func conditionsAndObserversRefuseWritesButKeepTheirName() throws {
    #expect(loadError("local c = mutex 'm' c.id = -1") == "spec.lua:1: a condition cannot be changed")
    #expect(loadError("local o = observer {} o.id = -1") == "spec.lua:1: an observer cannot be changed")
    let host = try runLua("name = mutex('m').name")
    try host.check("assert(name == 'mutex m', name)")
  }
}

@Suite struct SlotTests {
  @Test(arguments: [1, 2])
  func aWaitingBodyGivesItsSlotBack(_ jobs: Int) throws {
    let host = try runLua(
      """
      operation { name = "producer", run = function()
        local kids = {}
        for i = 1, 4 do kids[i] = operation { name = "kid" .. i, run = function() sleep(1) end } end
        wait(table.unpack(kids))
        done_at = true
      end }
      """, jobs: jobs)
    try host.check("assert(done_at)")
    #expect(host.op("producer").succeeded, "\(host.op("producer").error ?? "")")
    // At -j1 the four run one after another; at -j2 two at a time while the producer waits.
    #expect(host.op("producer").duration == Double(4 / jobs))
    #expect(host.scheduler.mainQueue.running == 0)
  }
}

/// The REPL's completion evaluates what precedes the dot: user code, bounded like every call
/// the host makes (an __index that runs 50 million instructions gives no completion).
@Suite struct CompletionBoundTests {
  @Test func aCompletionDoesNotRunUserCodeWithoutBound() throws {
    let host = try runLua(
      """
      slow = setmetatable({}, { __index = function()
        local n = 0
        for i = 1, 50000000 do n = n + 1 end
        return { found = n }
      end })
      quick = setmetatable({}, { __index = function() return { found = 1 } end })
      """)
    #expect(host.completions(for: "quick.x.f") == ["quick.x.found"])
    #expect(host.completions(for: "slow.x.f") == [])
  }
}
