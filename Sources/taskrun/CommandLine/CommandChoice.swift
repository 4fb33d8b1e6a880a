// CommandChoice: whether a first word such as `test` is a subcommand or a target of the script taskrun finds.
import FoundationEssentials
import Glibc
import LuaHost
import TaskEngine

/// The rule: a first word that names a subcommand (`repl`, `test`, `graph`, `help`) is that
/// subcommand, unless the script taskrun finds by itself (taskrun.lua or workflow.lua, here or
/// above) declares a top-level operation of that name: then it is that target, as in
/// `taskrun test` of a project whose script has a `test`. After the run's options the same
/// holds (`taskrun -C w1 graph`: the script of `w1`, or the one `-f FILE` names), and
/// `taskrun [OPTIONS] -- test …` is always the subcommand (Invocation). Only that collision loads Lua: `--version`, a run and a subcommand in a folder
/// without a script decide on the words alone. One is made per command line (and per
/// completion): it holds what its loads found.
final class CommandChoice {
  /// The words that name subcommands.
  static let subcommands = [
    "repl", "test", "graph", "status", "watch", "cancel", "pause", "resume", "why", "history", "runs", "report",
    "help"
  ]

  /// Seconds the check of `taskrun test`, `help` or `repl` may spend loading the found script
  /// (its top level runs dry, so this is Lua's own time): a top level that loops or waits
  /// must not hold a subcommand that does not need the script.
  static let checkSeconds = 5.0

  /// A load kept for `taskrun graph`: the check loaded the found script just as graph loads
  /// it, so graph draws that load instead of running the top level a second time.
  struct Load {
    let path: String
    let session: Session
    let messages: HeldMessages
  }
  private var kept: Load?

  /// What reading a script gave, by its path: its top-level operations, or why there are none
  /// (an error, the time ran out). A completion that checks `graph` and then offers targets
  /// loads the script once.
  private var loaded: [String: Result<[String], any Error>] = [:]

  /// The script's `arg` for the loads (the words after `--`).
  private let scriptArguments: [String]

  init(scriptArguments: [String]) {
    self.scriptArguments = scriptArguments
  }

  /// The load was stopped after `seconds`.
  struct LoadTimedOut: Error {
    let seconds: Double
  }

  /// Whether `word` (a subcommand's name, first on the command line) is a target of the
  /// discovered script. The script is loaded as `--list` loads it (nothing runs, what it
  /// prints is not shown) in its folder, and the working directory is restored after.
  /// A script that does not load, or not `within` seconds, is an error: which of the two
  /// was meant is not known. `keep`: a subcommand that reads the same script next
  /// (`graph`) may take the load (`takeLoad`). `stuck`: see `declaredOperations` (nil: the
  /// error, and exit 2). `directory`, `file`: `-C DIR` and `-f FILE` given before the word:
  /// the script is found from DIR, or is FILE (not standard input, which the command reads).
  func isTarget(
    _ word: String, within seconds: Double? = nil, keep: Bool = false,
    directory: String? = nil, file: String? = nil,
    stuck: (@Sendable () -> Void)? = nil
  ) throws -> Bool {
    let manager = FileManager.default
    let here = manager.currentDirectoryPath
    defer { _ = manager.changeCurrentDirectoryPath(here) }
    // A folder that is not there: the command says so.
    if let directory, !manager.changeCurrentDirectoryPath(directory) { return false }
    if let file, file == "-" || access(file, R_OK) != 0 { return false }
    guard let (folder, name) = file.map({ (manager.currentDirectoryPath, $0) }) ?? ScriptFinder.discover() else {
      return false
    }
    _ = manager.changeCurrentDirectoryPath(folder)
    let shown = name.hasPrefix("/") ? name : "\(folder)/\(name)"
    let why =
      "(\(shown) was loaded to see whether '\(word)' is one of its targets; "
      + "taskrun -- \(word) runs the subcommand)"
    let late = seconds.map { "\(shown) did not finish loading within \(Self.formatSeconds($0)) s\n" + why }
    do {
      let names = try declaredOperations(
        of: name, within: seconds, keep: keep,
        stuck: stuck ?? {
          writeStandardError("taskrun: \(late ?? why)\n")
          Taskrun.exitNow(ExitCode.usage.rawValue)
        })
      if names.contains(word), let load = kept {  // a run of that target loads the script itself
        kept = nil
        load.session.host.close()
      }
      return names.contains(word)
    } catch is LoadTimedOut {
      throw HostError(late ?? why)
    } catch let error as HostError {
      throw HostError("\(error.description)\n\(why)")
    }
  }

  /// The load `isTarget` kept of `script` (a path from the working directory), once.
  func takeLoad(of script: String) -> Load? {
    guard let load = kept, load.path == Self.absolute(script) else { return nil }
    kept = nil
    return load
  }

  /// The names of the operations `script` declares at its top level (not inside a group),
  /// loaded here as `--list` loads it: nothing runs and what it prints or writes is not
  /// shown. `seconds`: a time limit (`LoadDeadline`; `stuck` ends the process when Lua
  /// cannot be stopped); past it, `LoadTimedOut`.
  func declaredOperations(
    of script: String, within seconds: Double? = nil, keep: Bool = false,
    stuck: @escaping @Sendable () -> Void = {}
  ) throws -> [String] {
    let path = Self.absolute(script)
    if let known = loaded[path] { return try known.get() }
    let result = Result { try read(script, within: seconds, keepingAs: keep ? path : nil, stuck: stuck) }
    loaded[path] = result
    return try result.get()
  }

  private func read(
    _ script: String, within seconds: Double?, keepingAs path: String?,
    stuck: @escaping @Sendable () -> Void
  ) throws -> [String] {
    let messages = HeldMessages()
    // With no sink at all, print would write to standard output.
    let session = Session(
      jobs: 1, keepGoing: false, display: .sinks([messages]),
      host: .init(arguments: scriptArguments))
    session.attachSignals()  // a top level that loops: Ctrl-C stops it
    let scheduler = session.scheduler, host = session.host
    let deadline = seconds.map { LoadDeadline(seconds: $0, inbox: scheduler.inbox, stuck: stuck) }
    do {
      try host.loadToRead(path: script)
      _ = deadline?.end()
    } catch let error as HostError {
      let late = deadline?.end() == true
      defer { host.close() }
      if late, let seconds { throw LoadTimedOut(seconds: seconds) }
      if scheduler.halted { throw Taskrun.Exit(.interrupted) }
      scheduler.processes.endDescendants()
      throw error
    }
    let names = scheduler.operations.filter { $0.group == nil }.map(\.name)
    if let path {
      kept = Load(path: path, session: session, messages: messages)
    } else {
      host.close()
    }
    return names
  }

  private static func absolute(_ script: String) -> String {
    script.hasPrefix("/") ? script : FileManager.default.currentDirectoryPath + "/" + script
  }

  private static func formatSeconds(_ seconds: Double) -> String {
    seconds == seconds.rounded() ? String(Int(seconds)) : String(seconds)
  }
}

/// What a script prints while taskrun only reads its names: held, for `taskrun graph` to
/// show on standard error if it takes the load (`CommandChoice.takeLoad`), else dropped. At
/// most 1 MiB is kept; a line says how many more there were.
final class HeldMessages: EventSink {
  private(set) var lines: [String] = []
  private var bytes = 0
  private var dropped = 0

  func receive(_ event: RunEvent) {
    guard case .message(_, _, let text, _) = event else { return }
    guard bytes + text.utf8.count <= 1 << 20 else { dropped += 1; return }
    bytes += text.utf8.count + 1
    lines.append(text)
  }

  /// Writes what was held to standard error, as `MessagesToStandardError` would have.
  func replay() {
    for line in lines { writeStandardError(line + "\n") }
    if dropped > 0 { writeStandardError("taskrun: \(dropped) more lines the script printed were not kept\n") }
  }
}
