import TaskEngine
// TestRuntime: what an operation of `taskrun test` reports, from what the runner told the host.
import Testing

@testable import LuaHost

@Suite struct TestRuntimeTests {
  @Test func aTestThatNeverSaidGetsItsStatusFromTheOperationsOutcome() throws {
    let host = try runLua(
      """
      operation { name = 'ok', run = function() end }
      operation { name = 'bad', run = function() error('boom', 0) end }
      operation { name = 'told', run = function() end }
      """)
    let runtime = host.tests
    for name in ["ok", "bad", "told"] {
      runtime.cases[host.op(name).id] = TestCase(name: name, file: "t_spec.lua", line: 7)
    }
    runtime.cases[host.op("told").id]?.status = .failure  // the runner said: it stays
    runtime.errors[host.op("ok").id] = [TestCase(name: "after_each", file: "t_spec.lua", line: 2)]

    let ok = runtime.results(for: host.op("ok"))
    #expect(ok.map(\.name) == ["ok", "after_each"])
    #expect(ok.first?.status == .passed)
    let bad = try #require(runtime.results(for: host.op("bad")).first)
    #expect(bad.status == .error)
    #expect(bad.message == "t_spec.lua:7: boom")
    #expect(runtime.results(for: host.op("told")).first?.status == .failure)
  }

  @Test func aTestThatDoesNotCountIsNotReportedButItsErrorsAre() throws {
    let host = try runLua("operation { name = 'x', run = function() end }")
    let id = host.op("x").id
    host.tests.cases[id] = TestCase(name: "x", file: "t_spec.lua", line: 1)
    host.tests.cases[id]?.counted = false
    var hook = TestCase(name: "before_each", file: "t_spec.lua", line: 3)
    hook.status = .error
    host.tests.errors[id] = [hook]
    #expect(host.testResults(for: host.op("x")).map(\.name) == ["before_each"])
  }

  @Test func aPendingTestsBodyEndsSkipped() throws {
    let host = ScriptHost(scheduler: Scheduler(clock: ManualClock(), jobs: 1))
    try host.execute(source: "p = operation { name = 'p', run = function() end }", name: "@t.lua")
    host.tests.skipOnReturn[host.scheduler.operation(named: "p")!] = "not yet"
    _ = host.run(try host.select(targets: []))
    let op = host.scheduler.operation(named: "p")!
    #expect(op.outcome == .skipped)
    #expect(op.error == "not yet")
    #expect(host.tests.skipOnReturn.isEmpty)
  }
}
