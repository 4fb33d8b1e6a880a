// StoreCommands: `taskrun why OP` and `taskrun history [OP]`, read from the run store of the script's folder.
import ArgumentParser
import FoundationEssentials
import Glibc
import LuaHost
import TaskEngine

/// `taskrun why OP…`: why each operation would run now, and why it ran (or did not) last time.
struct WhyCommand: ParsableCommand, InvokedCommand {
  static let configuration = CommandConfiguration(
    commandName: "why",
    abstract: "Say why operations would run now, and why they ran (or did not) in the last run, from the run store.",
    usage: "taskrun why [-C DIR] [-f FILE | SCRIPT] OPERATION...",
    discussion: "Without SCRIPT (or -f), taskrun.lua or workflow.lua here or in a parent folder, as for a run.")

  @OptionGroup var place: ScriptPlace

  @Argument(help: ArgumentHelp("The workflow script, then the operations.", valueName: "script-and-operations"))
  var words: [String] = []

  func run(_ invocation: Invocation, choice: CommandChoice) throws {
    let (script, targets) = try StoreCommands.resolve(file: place.file, directory: place.directory, words: words)
    guard !targets.isEmpty else { throw StoreCommands.usage("taskrun why needs the name of an operation") }
    let session = Session(
      jobs: nil, keepGoing: false, display: .sinks([MessagesToStandardError()]),
      host: .init(arguments: invocation.scriptArguments))
    session.attachSignals()
    let selected: [OperationNode]
    do {
      try session.host.loadToRead(path: script)
      selected = try session.host.select(targets: targets)
    } catch let error as HostError {
      if session.scheduler.halted { throw Taskrun.Exit(.interrupted) }
      throw StoreCommands.usage(error.description)
    }
    let memory =
      try RunStoreAccess.memory(for: script, writing: false) { TerminalText.writeMessage("taskrun: warning: " + $0) }
      ?? RunMemory(store: nil, records: false)
    session.host.remember(memory)
    let prediction = session.scheduler.predict(session.scheduler.plan(for: selected), slots: nil)
    for op in selected {
      guard let verdict = prediction.verdicts.first(where: { $0.operation === op }) else { continue }
      print("\(op.name): \(verdict.runs ? "would run: " : "")" + TerminalText.escaped(verdict.why, keepingLines: false))
      if let (run, last) = memory.store?.attempts(operation: op.name, limit: 1).first {
        let how = last.attempt == 0 ? "reused" : "\(last.outcome)"
        let said = (last.why.map { ": \($0)" } ?? "") + (last.error.map { " (\($0))" } ?? "")
        print("  last: run \(run), \(how)" + TerminalText.escaped(said, keepingLines: false))
      }
    }
    throw Taskrun.Exit(.success)
  }
}

/// `taskrun history [OP]`: the recent runs, or one operation's recent attempts.
struct HistoryCommand: ParsableCommand, InvokedCommand {
  static let configuration = CommandConfiguration(
    commandName: "history",
    abstract: "Show the recent runs kept in the run store, or one operation's recent attempts and durations.",
    usage: "taskrun history [-C DIR] [-f FILE | SCRIPT] [OPERATION] [--limit N]",
    discussion: "Without SCRIPT (or -f), taskrun.lua or workflow.lua here or in a parent folder, as for a run.")

  @OptionGroup var place: ScriptPlace

  @Option(help: "How many runs or attempts to show (1 to 10000).")
  var limit: Int = 20

  @Argument(help: ArgumentHelp("The workflow script, then an operation.", valueName: "script-and-operation"))
  var words: [String] = []

  func run(_ invocation: Invocation, choice: CommandChoice) throws {
    guard (1...10_000).contains(limit) else {
      throw StoreCommands.usage("--limit must be from 1 to 10000 (got \(limit))")
    }
    let (script, targets) = try StoreCommands.resolve(file: place.file, directory: place.directory, words: words)
    guard targets.count <= 1 else { throw StoreCommands.usage("taskrun history takes at most one operation") }
    guard access(script, F_OK) == 0 else {
      throw StoreCommands.usage("no script '\(TerminalText.escaped(script))' here")
    }
    guard let folder = RunStoreAccess.workflowFolder(of: script) else {
      throw StoreCommands.usage("a script read from standard input has no run store")
    }
    let store: RunStore
    do { store = try RunStore(workflowFolder: folder, script: script, lock: false) } catch {
      print("No runs recorded in \(folder) yet.")
      throw Taskrun.Exit(.success)
    }
    if let name = targets.first {
      let attempts = store.attempts(operation: name, limit: limit)
      guard !attempts.isEmpty else {
        print("No attempts of '\(TerminalText.escaped(name))' are recorded.")
        throw Taskrun.Exit(.success)
      }
      print("run     attempt  outcome     duration   peak memory  CPU      why")
      for (run, a) in attempts {
        let duration = StoreCommands.seconds(a.duration)
        let memory = a.peakMemory.flatMap { $0 >= 0 ? StoreCommands.bytes($0) : nil } ?? "-"
        let cpu = StoreCommands.seconds(a.cpuSeconds)
        print(
          StoreCommands.pad("\(run)", 8) + StoreCommands.pad(a.attempt == 0 ? "-" : "\(a.attempt)", 9)
            + StoreCommands.pad(a.attempt == 0 ? "reused" : a.outcome, 12) + StoreCommands.pad(duration, 11)
            + StoreCommands.pad(memory, 13) + StoreCommands.pad(cpu, 9)
            + TerminalText.escaped(a.why ?? "", keepingLines: false))
      }
      let memory = RunMemory(store: store, records: false)
      if let median = memory.typicalDuration(of: name) {
        print(
          "Typical: \(formatSeconds(median))"
            + (memory.slowDuration(of: name).map { ", 90th percentile \(formatSeconds($0))" } ?? ""))
      }
    } else {
      let runs = store.runs(limit: limit)
      guard !runs.isEmpty else {
        print("No runs recorded in \(folder) yet.")
        throw Taskrun.Exit(.success)
      }
      print("run     started              duration   outcome      ran  up to date  failed  command")
      let held = store.isHeld
      for (k, run) in runs.enumerated() {
        let duration = StoreCommands.seconds(run.ended.map { $0 - run.started })
        let c = run.counts
        print(
          StoreCommands.pad("\(run.id)", 8) + StoreCommands.pad(StoreCommands.date(run.started), 21)
            + StoreCommands.pad(duration, 11)
            + StoreCommands.pad(run.outcome ?? (held && k == 0 ? "running" : "killed"), 13)
            + StoreCommands.pad("\(c["succeeded"] ?? 0)", 5) + StoreCommands.pad("\(c["up_to_date"] ?? 0)", 12)
            + StoreCommands.pad("\((c["failed"] ?? 0) + (c["cancelled"] ?? 0))", 8)
            + TerminalText.escaped(run.command, keepingLines: false))
      }
    }
    throw Taskrun.Exit(.success)
  }
}

enum StoreCommands {
  static func usage(_ message: String) -> Taskrun.Exit {
    TerminalText.writeMessage("taskrun: " + message)
    return Taskrun.Exit(.usage)
  }

  static func resolve(file: String?, directory: String?, words: [String]) throws -> (String, [String]) {
    do { return try ScriptFinder.resolve(file: file, directory: directory, words: words) } catch let error as HostError
    {
      throw usage(error.description)
    }
  }

  static func pad(_ text: String, _ width: Int) -> String {
    text.count >= width ? text + " " : text + String(repeating: " ", count: width - text.count)
  }

  static func bytes(_ n: Int64) -> String {
    n >= 1 << 30
      ? formatFixed(Double(n) / Double(1 << 30), 1) + " GB" : formatFixed(Double(n) / Double(1 << 20), 1) + " MB"
  }

  /// A duration read from the store ("-" for one that is no duration: the store is a file
  /// anyone with the folder may change).
  static func seconds(_ value: Double?) -> String {
    guard let value, value.isFinite, value >= 0, value < 1e9 else { return "-" }
    return formatSeconds(value)
  }

  /// A time of the store (seconds since 1970) as local "YYYY-MM-DD HH:MM:SS" ("-" out of range).
  static func date(_ seconds: Double) -> String {
    guard seconds.isFinite, seconds >= 0, seconds < 1e11 else { return "-" }
    var t = time_t(seconds)
    var parts = tm()
    localtime_r(&t, &parts)
    var buffer = [CChar](repeating: 0, count: 32)
    strftime(&buffer, buffer.count, "%Y-%m-%d %H:%M:%S", &parts)
    return String(cString: buffer)
  }
}
