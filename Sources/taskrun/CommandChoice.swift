// CommandChoice: whether a first word such as `test` is a subcommand or a target of the script taskrun finds.
import FoundationEssentials
import LuaHost
import TaskEngine

/// The rule: a first word that names a subcommand (`repl`, `test`, `graph`, `help`) is that
/// subcommand, unless the script taskrun finds by itself (taskrun.lua or workflow.lua, here or
/// above) declares a top-level operation of that name: then it is that target, as in
/// `taskrun test` of a project whose script has a `test`. `taskrun -- test …` is always the
/// subcommand. Only that collision loads Lua: `--version`, a run and a subcommand in a folder
/// without a script decide on the words alone.
enum CommandChoice {
  /// The words that name subcommands.
  static let subcommands = ["repl", "test", "graph", "help"]

  /// Whether `word` (a subcommand's name, first on the command line) is a target of the
  /// discovered script. The script is loaded as `--list` loads it (nothing runs, what it
  /// prints is not shown) in its folder, and the working directory is restored after.
  /// A script that does not load is an error: which of the two was meant is not known.
  static func isTarget(_ word: String) throws -> Bool {
    guard let (folder, name) = ScriptFinder.discover() else { return false }
    let manager = FileManager.default
    let here = manager.currentDirectoryPath
    _ = manager.changeCurrentDirectoryPath(folder)
    defer { _ = manager.changeCurrentDirectoryPath(here) }
    do {
      return try declaredOperations(of: name).contains(word)
    } catch let error as HostError {
      throw HostError("\(error.description)\n(\(folder)/\(name) was loaded to see whether '\(word)' is one of its "
        + "targets; taskrun -- \(word) runs the subcommand)")
    }
  }

  /// The names of the operations `script` declares at its top level (not inside a group),
  /// loaded here as `--list` loads it: nothing runs and what it prints is not shown.
  static func declaredOperations(of script: String) throws -> [String] {
    let scheduler = Scheduler(jobs: 1)
    Taskrun.attachSignals(scheduler)  // a top level that loops: Ctrl-C stops it
    scheduler.sinks = [Unheard()]  // with no sink at all, print would write to standard output
    let host = ScriptHost(scheduler: scheduler, arguments: RunCommand.scriptArguments)
    host.dryRun = true
    defer { host.close() }
    do {
      try host.load(path: script)
    } catch let error as HostError {
      if scheduler.halted { throw Taskrun.Exit(.interrupted) }
      scheduler.processes.endDescendants()
      throw error
    }
    return scheduler.operations.filter { $0.group == nil }.map(\.name)
  }
}

/// A sink that drops every event: what a script prints while taskrun only reads its names.
private final class Unheard: EventSink {
  func receive(_ event: RunEvent) {}
}
