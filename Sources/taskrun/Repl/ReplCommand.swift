// taskrun repl: an interactive Lua prompt on the same host, to declare, run and inspect.
import ArgumentParser
import FoundationEssentials
import Glibc
import LuaHost
import TaskEngine

struct ReplCommand: ParsableCommand, InvokedCommand {
  static let configuration = CommandConfiguration(
    commandName: "repl",
    abstract: "An interactive prompt: declare operations, run them, inspect results.",
    usage: "taskrun repl [-C DIR] [-f FILE | SCRIPT] [-j N] [--yes] [--sandbox[=lua]] [--sandbox-allow KINDS]",
    discussion:
      "A SCRIPT's declarations are loaded without running them (without one, the prompt starts empty). Type :help at the prompt."
  )

  @Option(name: [.customShort("j"), .customLong("jobs")], help: "Operations of the main queue that run at once.")
  var jobs: Int?

  @Flag(help: "Answer yes to every confirm(prompt).")
  var yes = false

  @OptionGroup var sandboxOptions: SandboxOptions

  @Argument(help: "A workflow script whose declarations to load.")
  var script: String?

  @Option(name: .customShort("f"), help: ArgumentHelp("The workflow script (as SCRIPT).", valueName: "file"))
  var file: String?

  @Option(name: .customShort("C"), help: ArgumentHelp("Change to DIR first.", valueName: "dir"))
  var directory: String?

  func validate() throws {
    if file != nil && script != nil { throw ValidationError("-f \(file!) and \(script!): one script only") }
  }

  static let help = """
    Lua 5.4 with the taskrun API. An expression shows its value (1 + 41 shows 42);
    an unfinished statement continues on the next line. run() runs what you declared.
      :help         this text
      :ops          the operations and their states
      :graph        the graph as text (each operation after its dependencies)
      :why NAME     what an operation waits for, or how it ended
      :load FILE    run a script's declarations
      :history      the last 50 entries (kept across sessions on a terminal)
      :quit         leave (so does Ctrl-D)
    """

  func run(_ invocation: Invocation, choice: CommandChoice) throws {
    if let directory, !FileManager.default.changeCurrentDirectoryPath(directory) {
      TerminalText.writeMessage("taskrun: -C \(directory): cannot change to that folder")
      throw Taskrun.Exit(.usage)
    }
    let script = file ?? script
    let isTerminal = Session.outputIsTerminal
    let lines = PlainReporter(
      verbosity: .normal, color: ColorPolicy.decide(disabled: false, isTerminal: isTerminal),
      showStarts: !isTerminal)
    let session = Session(
      jobs: jobs, keepGoing: true, display: .lines(lines, live: isTerminal),
      host: .init(arguments: invocation.scriptArguments, assumeYes: yes, asksOnTerminal: true))
    session.attachSignals(thirdExits: false) { EditLineReader.interrupt() }
    let host = session.host
    host.freshRunPerRequest = true
    try sandboxOptions.apply(to: session, script: script ?? "-")
    // A script that does not load is a usage error, as for a run: not a prompt without it.
    if let script, !load(script, into: host, prefix: "taskrun: ") {
      session.finish(code: session.scheduler.halted ? ExitCode.interrupted.rawValue : ExitCode.usage.rawValue)
    }
    if isatty(STDIN_FILENO) != 0 {  // a banner, as lua prints one
      print("\(TaskrunVersion.text) — :help for the commands, Ctrl-D to leave")
    }
    let reader: any LineReader =
      isatty(STDIN_FILENO) != 0
      ? EditLineReader.forTerminal(complete: { host.completions(for: $0) }) : PlainLineReader()
    Repl(host: host, reader: reader, view: session.liveView).loop()
    if host.exitCode != nil { _ = session.settle() }  // os.exit: the run it ended is reported
    session.finish(code: 0)
  }

  /// Loads a script's declarations; false (the error printed) when it did not load.
  @discardableResult
  func load(_ path: String, into host: ScriptHost, prefix: String = "") -> Bool {
    let before = host.scheduler.operations.count  // typed at the prompt or loaded before
    do {
      try host.load(path: path)
      let all = host.scheduler.operations.count
      let count = all - before
      let others = before == 0 ? "" : "\(all) in all; "
      print("loaded \(path): \(count) operation\(count == 1 ? "" : "s") declared (\(others)run() runs them)")
      return true
    } catch {
      TerminalText.writeMessage("\(prefix)\(error)")
      host.endInterrupt()
      return false
    }
  }
}

/// The read-evaluate-print loop itself.
struct Repl {
  let host: ScriptHost
  let reader: any LineReader
  /// The live view on a terminal: it steps aside before results and the next prompt.
  var view: LiveReporter? = nil

  func loop() {
    var buffer = ""
    while let input = reader.read(prompt: buffer.isEmpty ? "> " : ">> ") {
      guard case .line(let line) = input else {
        buffer = ""  // Ctrl-C drops the line and any unfinished statement
        continue
      }
      if buffer.isEmpty, line.hasPrefix(":") {
        if !meta(line) { return }
        continue
      }
      buffer += buffer.isEmpty ? line : "\n" + line
      if buffer.trimmed(newlines: false).isEmpty { buffer = ""; continue }
      host.endInterrupt()
      do {
        let result = try host.evaluate(line: buffer)
        host.settleInterrupted()
        view?.restore()
        switch result {
        case .incomplete: continue
        case .ran(let shown): if let shown { print(shown) }
        }
      } catch {
        host.settleInterrupted()
        view?.restore()
        // os.exit raised to stop the line: no error (the summary says the run was ended).
        if host.exitCode == nil { TerminalText.writeMessage("\(error)") }
      }
      if host.exitCode != nil { return }  // os.exit: leave
      reader.remember(buffer)
      buffer = ""
      host.endInterrupt()
    }
  }

  /// Runs a meta-command; false means leave.
  func meta(_ line: String) -> Bool {
    let words = line.dropFirst().split(separator: " ", maxSplits: 1).map(String.init)
    let scheduler = host.scheduler
    switch words.first ?? "" {
    case "help", "h": print(ReplCommand.help)
    case "quit", "q", "exit": return false
    case "history":
      for (i, entry) in reader.history.suffix(50).enumerated() { print(String(i + 1).leftPadded(4) + "  " + entry) }
    case "ops":
      if scheduler.operations.isEmpty { print("no operations yet") }
      for op in scheduler.operations {
        let outcome = op.outcome.map { ", \($0.rawValue)" } ?? ""
        let duration = op.duration.map { ", " + formatFixed($0, 2) + " s" } ?? ""
        print("  \(op.name): \(op.state.rawValue)\(outcome)\(duration)")
      }
    case "graph":
      for op in scheduler.plan(for: scheduler.operations) {
        let after = op.dependencies.map(\.name)
        print("  \(op.name)" + (after.isEmpty ? "" : " <- " + after.joined(separator: ", ")))
      }
    case "why":
      guard words.count == 2, let op = scheduler.operation(named: words[1]) else {
        let hint = words.count == 2 ? suggestion(for: words[1], among: scheduler.operations.map(\.name)) : ""
        print(
          words.count == 2
            ? "no operation named '\(TerminalText.escaped(words[1]))'" + (hint.isEmpty ? "" : "; \(hint)")
            : "usage: :why NAME")
        return true
      }
      print(TerminalText.escaped(scheduler.explain(op), keepingLines: true))  // may quote stderr, Slurm
    case "load":
      guard words.count == 2 else { print("usage: :load FILE"); return true }
      ReplCommand().load(words[1], into: host)
    default:
      print("unknown command '\(line)'; :help lists them")
    }
    return true
  }
}
