// Observing progress (initial call, keys, every change, cancelling), user_info, priorities,
// qos, q.operations and choose(): the rest of the NSProgress and NSOperation handle.
import LuaHost
import TaskEngine
import Testing

@Suite struct ObservationTests {
  @Test func initialCallsAtOnceAndCancelStopsTheCalls() throws {
    let host = try runLua(
      """
      p = progress { total = 10 }
      calls = 0
      h = p:observe(function() calls = calls + 1 end, { initial = true })
      initial = calls
      operation { name = "w", run = function()
        p.completed = 1
        sleep(1)
        h:cancel()
        after_cancel = calls
        p.completed = 2
        sleep(1)
      end }
      """)
    try host.check(
      """
      assert(initial == 1, initial)
      assert(after_cancel == 2 and calls == 2, after_cancel .. " " .. calls)
      assert(h.active == false and tostring(h):find("cancelled"))
      """)
  }

  @Test func everyChangeIsToldWhenAskedAndOnlyTheKeysWatched() throws {
    let host = try runLua(
      """
      p = progress { total = 10 }
      every, paused = {}, 0
      p:observe(function(n) every[#every + 1] = n.completed end, { every = true })
      local only = p:observe(function() paused = paused + 1 end, { keys = { "paused" }, every = true })
      for i = 1, 5 do p.completed = i end
      p.description = "words"
      p:pause(); p:resume()
      p:unobserve(only)
      p:pause()
      keys = only.keys
      """)
    try host.check(
      """
      assert(table.concat(every, ",") == "1,2,3,4,5,5,5,5,5", table.concat(every, ","))
      assert(paused == 2, paused)
      assert(#keys == 1 and keys[1] == "paused")
      """)
  }

  @Test func coalescedObserversAreCalledOnlyWhenAWatchedKeyChanged() throws {
    let host = try runLua(
      """
      p = progress { total = 10 }
      fractions, any = 0, 0
      p:observe(function() fractions = fractions + 1 end, { keys = { "fraction" } })
      p:observe(function() any = any + 1 end)
      operation { name = "w", run = function()
        p.description = "only words"
        sleep(1)
        p.completed = 5
        sleep(1)
      end }
      """)
    try host.check("assert(fractions == 1 and any == 2, fractions .. ' ' .. any)")
  }

  @Test(arguments: [
    ("p:observe(function() end, { keys = { 'speed' } })", "observe: 'keys' must name fields of a progress"),
    ("p:observe(function() end, { keys = {} })", "observe: 'keys' must name at least one field"),
    ("p:observe(function() end, { often = true })", "unknown field 'often'"),
    ("p:observe(function() end, 3)", "bad argument #3 to 'observe'"),
    ("p:unobserve(p)", "bad argument #2 to 'unobserve'")
  ])
  func badObservationsAreRefused(_ call: String, _ message: String) {
    let error = loadError("p = progress { total = 1 }\n" + call) ?? ""
    #expect(error.contains("spec.lua:2:") && error.contains(message), "\(error)")
  }

  @Test func anObserverThatSpinsOrRaisesIsStoppedAndNotCalledAgain() throws {
    let host = try runLua(
      """
      calls, ticks = 0, 0
      operation { name = "other", run = function() for i = 1, 3 do sleep(1); ticks = ticks + 1 end end }
      operation { name = "spinner", run = function()
        local p = progress { total = 10 }
        p:observe(function() calls = calls + 1; while true do end end, { every = true })
        p.completed = 1
        p.completed = 2
        local q = progress { total = 10 }
        q:observe(function() calls = calls + 1; error("observer broke") end)
        q.completed = 1
        sleep(1)
        q.completed = 2
        sleep(1)
      end }
      """)
    try host.check("assert(calls == 2 and ticks == 3, calls .. ' ' .. ticks)")
    #expect(host.op("spinner").succeeded && host.op("other").succeeded)
  }

  @Test func userInfoIsCopiedInAndOutAndChecked() throws {
    let host = try runLua(
      """
      p = progress { total = 2 }
      p.user_info = { photo = "a.jpg", size = 3, ok = true }
      local copy = p.user_info
      copy.photo = "changed"
      p:set_user_info("size", nil)
      p:set_user_info("where", "archive")
      info = p.user_info
      """)
    try host.check(
      """
      assert(info.photo == "a.jpg" and info.size == nil and info.ok == true and info.where == "archive")
      assert(math.type(p.user_info.ok) == nil)
      """)
    #expect(
      loadError("progress{}.user_info = { f = function() end }")?.contains("must be a string, number or boolean")
        == true)
    #expect(loadError("progress{}.user_info = { [1] = 'x' }")?.contains("keys of 'user_info' must be strings") == true)
    #expect(loadError("progress{}:set_user_info('k', 0/0)")?.contains("user_info 'k'") == true)
    #expect(
      loadError("local p = progress{} for i = 1, 65 do p:set_user_info('k' .. i, i) end")?.contains("at most 64 keys")
        == true)
  }

  @Test func userInfoGoesIntoTheOperationsProgressEvents() throws {
    let host = try runLua(
      """
      operation { name = "u", run = function(op) op.progress:set_user_info("photo", "a.jpg") end }
      """)
    #expect(host.op("u").progress.userInfo == ["photo": .text("a.jpg")])
    let snapshot = ProgressSnapshot.ofOperation(host.op("u").progress, lastShown: nil).0
    #expect(snapshot.userInfo == ["photo": .text("a.jpg")])
  }
}

@Suite struct PriorityTests {
  @Test(arguments: [
    (-8.0, Priority.veryLow), (-7, .veryLow), (-6, .low), (-2, .normal), (2, .normal), (3, .high), (6, .high),
    (7, .veryHigh), (100, .veryHigh), (-100, .veryLow), (0.4, .normal), (1e17, .veryHigh), (-1e300, .veryLow),
    (0x1p62, .veryHigh)
  ])
  func numbersSnapToTheNearestLevel(_ number: Double, _ level: Priority) {
    #expect(Priority(number: number) == level)
  }

  @Test func aPriorityMayChangeUntilTheOperationStarts() throws {
    let host = try runLua(
      """
      local q = queue { name = "serial", max_concurrent = 1 }
      order = {}
      local function op(name, priority)
        return operation { name = name, queue = q, priority = priority, run = function() order[#order + 1] = name end }
      end
      local a, b, c = op("a", 4), op("b", "normal"), op("c", -8)
      c.priority = 8
      b.priority = -4.5
      levels = { a.priority, b.priority, c.priority }
      """)
    try host.check(
      """
      assert(table.concat(order, ",") == "c,a,b", table.concat(order, ","))
      assert(table.concat(levels, ",") == "high,low,very_high", table.concat(levels, ","))
      local ok, message = pcall(function() operation.a = nil end)
      """)
    let error = try #require(
      loadError("local a = operation { name = 'a', run = function() end } run(a) a.priority = 4"))
    #expect(error.contains("spec.lua:1: cannot change the priority of 'a': it already finished"), "\(error)")
    #expect(loadError("operation { name = 'x', priority = 'urgent' }")?.contains("or a number from -8 to 8") == true)
    #expect(loadError("operation { name = 'x', priority = 0/0 }")?.contains("field 'priority'") == true)
  }

  @Test func qosIsCheckedAndKept() throws {
    let host = try runLua("operation { name = 'bg', qos = 'background', run = function() end }")
    #expect(host.op("bg").qos == .background)
    #expect(
      loadError("operation { name = 'x', qos = 'low' }")?.contains(
        "field 'qos' must be one of user_interactive, user_initiated, utility, background (got 'low')") == true)
  }

  @Test func aQueueListsWhatHasNotFinishedAndKeepsTheRest() throws {
    let host = try runLua(
      """
      q = queue { name = "q" }
      operation { name = "done", queue = q, run = function() end }
      operation { name = "gate", run = function() sleep(1) end }
      operation { name = "waiting", queue = q, after = { "gate" }, run = function() end }
      operation { name = "looker", run = function() sleep(0.5); open = #q.operations; all = #q.all_operations end }
      """)
    try host.check(
      "assert(open == 1 and all == 2 and #q.operations == 0 and #q.all_operations == 2, open .. ' ' .. all)")
  }
}

@Suite struct ChooseTests {
  func host(answer: String? = nil, asked: String? = nil) -> ScriptHost {
    let scheduler = Scheduler(clock: ManualClock(), jobs: 2)
    scheduler.keepGoing = true
    let host = ScriptHost(scheduler: scheduler)
    var ask: (@Sendable (Question) -> String?)?
    if let asked { ask = { _ in asked } }
    host.choiceAnswers = ChoiceAnswers(answer: answer, ask: ask)
    return host
  }

  func run(_ host: ScriptHost, _ source: String) throws {
    try host.execute(source: source, name: "@spec.lua")
    _ = host.run(try host.select(targets: []))
  }

  @Test func awayFromATerminalTheDefaultOrTheAnswerIsTaken() throws {
    let quiet = host()
    try run(
      quiet,
      #"operation { name = "o", run = function() got = choose("Upload failed", { "Retry", "Skip" }, { default = "skip" }) end }"#
    )
    try quiet.check(#"assert(got == "Skip", got)"#)
    let answered = host(answer: "retry")
    try run(
      answered,
      #"operation { name = "o", run = function() got = choose("Upload failed", { "Retry", "Skip" }, { default = "Skip" }) end }"#
    )
    try answered.check(#"assert(got == "Retry", got)"#)
    let numbered = host(answer: "2")
    try run(numbered, #"got = choose("Which?", { "a", "b", "c" })"#)
    try numbered.check(#"assert(got == "b", got)"#)
  }

  @Test func onATerminalTheAnswerIsTheOneGiven() throws {
    let asked = host(asked: "Abort")
    try run(
      asked,
      #"operation { name = "o", run = function() got = choose("Upload failed", { "Retry", "Skip", "Abort" }) end }"#)
    try asked.check(#"assert(got == "Abort", got)"#)
  }

  @Test func withoutADefaultAwayFromATerminalItRaisesAtTheCallersLine() throws {
    let quiet = host()
    try run(quiet, #"operation { name = "o", run = function() choose("Upload failed", { "Retry", "Skip" }) end }"#)
    let op = quiet.scheduler.operation(named: "o")!
    #expect(
      op.failed
        && op.error
          == "spec.lua:1: cannot ask \"Upload failed\": not running on a terminal, and it has no default (give choose() a default, or run with --answer CHOICE)",
      "\(op.error ?? "")")
  }

  @Test func theConditionFormSkipsFailsOrRuns() throws {
    let quiet = host(answer: "later")
    try run(
      quiet,
      """
      operation { name = "skipped", conditions = { choice("Deploy?", { "now", "later", "never" }, { skip = "later", fail = { "never" } }) }, run = function() end }
      operation { name = "failed", conditions = { choice("Deploy?", { "now", "never" }, { default = "never", fail = "never" }) }, run = function() end }
      operation { name = "ran", conditions = { choice("Deploy?", { "now", "never" }, { default = "now", skip = "never" }) }, run = function() end }
      """)
    let s = quiet.scheduler
    #expect(
      s.operation(named: "skipped")!.skipped
        && s.operation(named: "skipped")!.error?.contains("\"Deploy?\": later") == true)
    #expect(s.operation(named: "failed")!.failed && s.operation(named: "ran")!.succeeded)
  }

  @Test(arguments: [
    ("choose('', {'a'})", "bad argument #1 to 'choose' (question (a string of 1 to 1000 bytes) expected"),
    ("choose('q', {})", "bad argument #2 to 'choose' (list of 1 to 20 choices expected, got table)"),
    ("choose('q', {'a', 'A'})", "the choice 'A' is given twice"),
    ("choose('q', {'1'})", "choice #1 must be a name of 1 to 100 bytes, not a number"),
    ("choose('q', {'a'}, { default = 'b' })", "the default 'b' is not one of the choices"),
    ("choice('q', {'a'}, { skip = 'b' })", "choice: 'skip' must name choices"),
    ("choice('q', {'a'}, { when = 'a' })", "unknown field 'when'"),
    ("choose('q', {'a'}, { default = 'a', bogus = 1 })", "unknown field 'bogus'"),
    ("choice('q', {'a', 'b'}, { skip = 'a', fail = { 'a' } })", "choice: 'a' is in both 'skip' and 'fail'"),
    ("choose('q', {'a', ''})", "choice #2 must be a name of 1 to 100 bytes, not a number (got \"\")"),
    ("choose('q', {'a', nil, 'b'})", "choice #2 must be a name of 1 to 100 bytes, not a number (got nil)")
  ])
  func badQuestionsAreRefused(_ source: String, _ message: String) {
    let error = loadError(source) ?? ""
    #expect(error.contains("spec.lua:1:") && error.contains(message), "\(error)")
  }
}
