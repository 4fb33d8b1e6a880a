import CLua
// Workflow: what the command line does with a loaded script: pick targets, plan, run.
import CLuaShim
import FoundationEssentials
import Glibc
import TaskEngine

extension ScriptHost {
  /// The operations a command line's targets select (all declared ones when none are given),
  /// with the names in `after` that they need resolved and the graph checked: a bad name of
  /// an operation the run leaves out is no error. Unknown targets get a "did you mean".
  public func select(targets: [String]) throws -> [OperationNode] {
    let selected = targets.isEmpty ? nil : try targets.map(target)
    do {
      // No target selects every operation: all names, without walking the graph.
      if let selected { try scheduler.resolveNames(neededBy: selected) } else { try scheduler.resolveNames() }
    } catch let error as EngineError {
      throw HostError(error.located(in: scriptPath))
    }
    return selected ?? scheduler.unscheduledOperations()
  }

  /// The operation a target from the command line names; else an `unknown target` error.
  private func target(_ target: String) throws -> OperationNode {
    guard let op = scheduler.operation(named: target) else {
      let names = scheduler.operations.map(\.name)
      let hint = suggestion(for: target, among: names)
      throw HostError(
        "\(scriptPath): unknown target '\(TerminalText.escaped(target))'"
          + (hint.isEmpty ? "" : "; \(hint)")
          + (names.isEmpty
            ? " (the script declares no operations)"
            : hint.isEmpty && names.count <= 12 ? " (targets: \(names.joined(separator: ", ")))" : ""))
    }
    return op
  }

  /// Runs `ops` and their dependencies until everything scheduled has finished.
  public func run(_ ops: [OperationNode]) -> RunSummary {
    scheduler.clearStop()
    scheduler.schedule(ops)
    scheduler.run(
      until: { self.scheduler.unfinishedScheduled == 0 },
      onStall: { self.failStalledWaits() })
    flushWrites()
    return scheduler.finishRun()
  }

  /// After the script's top level stopped early (interrupted, os.exit): lets what was
  /// cancelled finish, then reports the run (summary and `run_finish`) if one started or
  /// `os.exit` ended it. Nil when there was no run to report.
  public func settle() -> RunSummary? {
    scheduler.run(
      until: { self.scheduler.unfinishedScheduled == 0 },
      onStall: { self.failStalledWaits() })
    if scheduler.runStartTime == nil {
      guard exitCode != nil else { return nil }
      scheduler.schedule([])  // os.exit before anything ran: the run is still reported
    }
    flushWrites()
    return scheduler.finishRun()
  }

  /// Line-buffers stdout (shared by Lua's print and Swift's) so output reaches pipes in order.
  public static func lineBufferStandardOutput() { tl_line_buffer_stdout() }

  /// Marks the current interrupt for the interrupt hook (safe from any thread).
  public static func interruptLua(_ on: Bool) { setInterrupt(on) }
}

extension ScriptHost {
  /// The files of the Lua modules the script loaded with `require` (those of `package.loaded`
  /// that `package.path` finds now), for `taskrun -w`. Read with raw accesses only: a
  /// `package` table the script replaced is read as it is, or not at all.
  public func loadedLuaFiles() -> [String] {
    let s = stack
    let top = s.top
    defer { lua_settop(L, top) }
    lua_rawgeti(L, tl_registryindex(), lua_Integer(LUA_RIDX_GLOBALS))
    guard s.rawGet(-1, "package") == LUA_TTABLE else { return [] }
    let package = s.top
    guard s.rawGet(package, "path") == LUA_TSTRING, let path = s.string(-1) else { return [] }
    guard s.rawGet(package, "loaded") == LUA_TTABLE else { return [] }
    let loaded = s.top
    var names: [String] = []
    s.pushNil()
    while tl_next(L, loaded) != 0 && names.count < 10_000 {
      if s.type(-2) == LUA_TSTRING, let name = s.string(-2) { names.append(name) }
      s.pop()
    }
    var files: [String] = []
    for name in names where !name.isEmpty && !name.contains("/") {
      let stem = String(name.map { $0 == "." ? "/" : $0 })
      for template in path.split(separator: ";") {
        let file = template.split(separator: "?", omittingEmptySubsequences: false).joined(separator: stem)
        if access(file, R_OK) == 0 {
          files.append(file)
          break
        }
      }
    }
    return files
  }
}
