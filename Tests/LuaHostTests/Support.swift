// Test support: run Lua source on a host, on virtual time unless real time is asked for.
import LuaHost
import TaskEngine

/// Runs `source` as the script `spec.lua`, then everything it declared and did not run.
@discardableResult
func runLua(_ source: String, jobs: Int = 4, realTime: Bool = false, keepGoing: Bool = true) throws -> ScriptHost {
  let scheduler = Scheduler(clock: realTime ? MonotonicClock() : ManualClock(), jobs: jobs)
  scheduler.keepGoing = keepGoing
  let host = ScriptHost(scheduler: scheduler, arguments: ["one", "two"])
  try host.execute(source: source, name: "@spec.lua")
  _ = host.run(try host.select(targets: []))
  return host
}

/// The message of the HostError that running `source` throws, or nil.
func loadError(_ source: String) -> String? {
  do {
    try runLua(source)
    return nil
  } catch {
    return "\(error)"
  }
}

extension ScriptHost {
  /// Runs more Lua (typically assertions about what ran) in the same state.
  func check(_ source: String) throws { try execute(source: source, name: "@check.lua") }
  func op(_ name: String) -> OperationNode { scheduler.operation(named: name)! }
}
