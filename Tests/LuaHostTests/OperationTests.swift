import LuaHost
import TaskEngine
// operation{}: fields, handles, results and errors as a script sees them.
import Testing

@Suite struct OperationTests {
  @Test func handlesAreStableValues() throws {
    let host = try runLua(
      """
      a = operation { name = "a" }
      b = operation { name = "b", after = { a } }
      assert(b.dependencies[1] == a, "the dependency is the same handle")
      assert(a.queue == main_queue and b.queue == a.queue)
      assert(require("taskrun").main_queue == main_queue)
      """)
    try host.check("assert(a.state == 'finished' and a.succeeded and not a.failed)")
  }

  @Test func bodyResultsAndCommandResultsAreReadable() throws {
    let host = try runLua(
      """
      calc = operation { name = "calc", run = function(op) return { answer = 42, by = op.name } end }
      echo = operation { name = "echo", sh = { "printf", "%s", "hello world" } }
      """)
    try host.check(
      """
      assert(calc.result.answer == 42 and calc.result.by == "calc")
      assert(calc.result == calc.result, "the result is one value")
      assert(echo.result.status == 0 and echo.result.stdout == "hello world" and echo.result.stderr == "")
      assert(type(calc.duration) == "number" and calc.attempt == 1)
      assert(tostring(calc):match("^<operation calc: finished, succeeded, [%d.]+ s>$"), tostring(calc))
      """)
  }

  @Test func aRaisingBodyFailsWithFileLineAndTraceback() throws {
    let host = try runLua(
      """
      local function helper(n)
        error("value too big: " .. n)
      end
      operation { name = "bad", run = function() helper(5) end }
      """)
    let bad = host.op("bad")
    #expect(bad.failed)
    #expect(bad.error == "spec.lua:2: value too big: 5")
    #expect(bad.traceback?.contains("spec.lua:2: in upvalue 'helper'") == true)
    #expect(bad.traceback?.contains("spec.lua:4:") == true)
  }

  @Test func errorObjectsThatAreNotStringsAreDescribed() throws {
    let host = try runLua(
      """
      operation { name = "table", run = function() error({}) end }
      operation { name = "tostring", run = function() error(setmetatable({}, { __tostring = function() return "custom" end })) end }
      """)
    #expect(host.op("table").error == "(error object is a table value)")
    #expect(host.op("tostring").error == "custom")
  }

  @Test func unknownFieldsAreRefusedWithTheValidOnes() {
    #expect(
      loadError("operation { name = 'x', afer = {} }")
        == "spec.lua:1: operation 'x': unknown field 'afer'; did you mean 'after'? (valid fields: name, run, sh, env, cwd, progress, after, queue, priority, when, conditions, timeout, observers, retries, retry, weight, desc, sandbox, cleanup, cleanup_grace, qos, inputs, outputs, depfile, key, fresh, service, ready, interactive)"
    )
  }

  @Test(arguments: [
    ("operation { run = 3 }", "spec.lua:1: operation: field 'run' must be a function (got number)"),
    (
      "operation { name = 'x', after = 3 }",
      "spec.lua:1: operation 'x': field 'after' must hold operations or names (got number)"
    ),
    (
      "operation { priority = 'urgent' }",
      "spec.lua:1: operation: field 'priority' must be one of very_low, low, normal, high, very_high or a number from -8 to 8 (got 'urgent')"
    ),
    (
      "operation { when = 'always' }",
      "spec.lua:1: operation: field 'when' must be one of succeeded, finished, failed (got 'always')"
    ),
    ("operation { sh = 'true', run = function() end }", "spec.lua:1: operation: give either 'run' or 'sh', not both"),
    ("operation { sh = {} }", "spec.lua:1: operation: field 'sh': the argv list is empty"),
    (
      "operation { sh = 'true', env = { X = {} } }", "spec.lua:1: operation: env value 'X' must be a string (got table)"
    ),
    ("operation { cwd = '/tmp' }", "spec.lua:1: operation: 'env', 'cwd' and 'progress' apply to 'sh' commands only"),
    (
      "operation { timeout = -1 }",
      "spec.lua:1: operation: field 'timeout' must be a positive number of seconds (got -1)"
    ),
    (
      "operation { 'positional' }",
      "spec.lua:1: operation: unexpected positional value #1; fields are named (valid fields: name, run, sh, env, cwd, progress, after, queue, priority, when, conditions, timeout, observers, retries, retry, weight, desc, sandbox, cleanup, cleanup_grace, qos, inputs, outputs, depfile, key, fresh, service, ready, interactive)"
    ),
    ("operation 'x'", "spec.lua:1: bad argument #1 to 'operation' (table expected, got string)"),
    ("operation { name = 'a' } operation { name = 'a' }", "spec.lua:1: an operation named 'a' already exists"),
    (
      "queue { name = 'q', max_concurrent = 1.5 }",
      "spec.lua:1: queue 'q': max_concurrent must be a whole number from 0 to 1000000, or -1 for unlimited (got 1.5)"
    ),
    (
      "local a = operation {} ; print(a.stat)", "spec.lua:1: operation 'op1' has no field 'stat'; did you mean 'state'?"
    ),
    (
      "local a = operation {} ; a.cancel()",
      "spec.lua:1: bad self for 'cancel' (operation expected, got no value; use op:cancel(...))"
    ),
    (
      "queue { name = 'q' }.suspend(3)",
      "spec.lua:1: bad self for 'suspend' (queue expected, got number; use q:suspend(...))"
    ),
    (
      "local a = operation {} ; a.name = 'b'",
      "spec.lua:1: cannot set 'name': the fields of an operation are read-only but 'priority' (set them in operation{})"
    )
  ])
  func badSpecsAreScriptErrorsAtTheirLine(_ source: String, _ message: String) {
    #expect(loadError(source) == message)
  }

  @Test func aFailedDeclarationLeavesNoHalfOperationBehind() throws {
    let host = try runLua(
      """
      ok = pcall(operation, { name = "half", priority = "bogus" })
      again = operation { name = "half" }
      """)
    try host.check("assert(not ok and again.name == 'half' and again.succeeded)")
  }

  @Test func dependenciesByNameMayBeDeclaredLater() throws {
    let host = try runLua(
      """
      order = {}
      operation { name = "second", after = { "first" }, run = function() order[#order + 1] = "second" end }
      operation { name = "first", run = function() order[#order + 1] = "first" end }
      """)
    try host.check("assert(table.concat(order, ',') == 'first,second')")
  }

  @Test func methodsAddAndRemoveDependenciesAndExplain() throws {
    let host = try runLua(
      """
      order = {}
      local function step(name) return function() order[#order + 1] = name end end
      a = operation { name = "a", run = step("a") }
      b = operation { name = "b", run = step("b") }
      c = operation { name = "c", run = step("c") }
      a:after(b, "c")
      a:remove_dependency(b)
      why = a:why()
      assert(#a.dependencies == 1 and a.dependencies[1] == c)
      """, jobs: 1)
    try host.check(
      """
      assert(table.concat(order, ',') == 'b,c,a', table.concat(order, ','))
      assert(why == "'a' is not scheduled: nothing has asked to run it yet", why)
      """)
  }

  @Test func whenPoliciesAndSkippedOperationsAreVisible() throws {
    let host = try runLua(
      """
      bad = operation { name = "bad", sh = "exit 1" }
      dependent = operation { name = "dependent", after = { bad } }
      cleanup = operation { name = "cleanup", after = { bad }, when = "failed" }
      always = operation { name = "always", after = { bad }, when = "finished" }
      """)
    try host.check(
      """
      assert(bad.failed and bad.error == "exited with status 1: exit 1", bad.error)
      assert(dependent.skipped and dependent.error == "dependency 'bad' failed")
      assert(cleanup.succeeded and always.succeeded)
      """)
  }

  // Bodies run on threads reused from bodies that ended; a thread Lua code was handed
  // (coroutine.running) is never reused, so what a script saved stays what it was.
  @Test func aThreadHandedToLuaCodeIsNeverReused() throws {
    let host = try runLua(
      """
      ops = {}
      local previous = operation { name = "saver", run = function() saved = coroutine.running() end }
      for i = 1, 100 do
        previous = operation { name = "next" .. i, after = { previous }, when = "finished", run = function()
          if i % 2 == 0 then error("fails, and its thread is reused") end
          return i
        end }
        ops[i] = previous
      end
      operation { name = "check", after = { previous }, when = "finished", run = function()
        seen = { coroutine.status(saved), saved == coroutine.running() }
      end }
      """)
    try host.check(
      """
      assert(seen[1] == "dead" and seen[2] == false, tostring(seen[1]))
      assert(ops[99].result == 99 and ops[100].failed and ops[100].error:find("fails, and its thread is reused"))
      """)
  }
}

@Suite struct LargeGraphTests {
  @Test func aJoinOverThousandsOfOperationsAndAWaitOnAllOfThem() throws {
    let host = try runLua(
      """
      local all = {}
      for i = 1, 5000 do all[i] = operation { name = "t" .. i, run = function() return i end } end
      join = operation { name = "join", after = all, run = function()
        local results = { wait(table.unpack(all)) }
        total = 0
        for _, r in ipairs(results) do total = total + r end
      end }
      """)
    try host.check("assert(#join.dependencies == 5000 and total == 5000 * 5001 // 2, total)")
  }
}
