// taskrun: the command line. Parses options, loads the script, runs it, maps outcomes to exit codes.
import ArgumentParser
import Foundation
import LuaHost
import TaskEngine

/// Exit codes: 0 all succeeded; 1 an operation failed or was cancelled; 2 usage or script
/// error; 130 interrupted.
enum ExitCode: Int32 {
  case success = 0, failure = 1, usage = 2, interrupted = 130
}

/// The program: parses the command line (RunCommand), runs it, and maps the outcome to an
/// exit code. `graph`, `repl` and `test` are subcommands.
@main
enum Taskrun {
  static func main() {
    // Signals were blocked before main (CSpawn); from here they are handled, never lost.
    SignalWatcher.shared.start()
    ProcessRunner.becomeSubreaper()  // orphaned descendants of commands become ours to end
    ScriptHost.lineBufferStandardOutput()
    // A reader that went away (`taskrun x.lua | head`) must not kill taskrun before it has
    // stopped its children; writes then just fail. Children get the default back.
    signal(SIGPIPE, SIG_IGN)
    do {
      // Everything after the first `--` belongs to the script (`arg`), not to taskrun.
      var arguments = Array(CommandLine.arguments.dropFirst())
      if let separator = arguments.firstIndex(of: "--") {
        RunCommand.scriptArguments = Array(arguments[(separator + 1)...])
        arguments = Array(arguments[..<separator])
      }
      // make's spelling `-j4` means `-j 4`; `-j -1` is a value to refuse, not an option.
      arguments = arguments.flatMap { argument -> [String] in
        argument.hasPrefix("-j") && argument.count > 2 && Int(argument.dropFirst(2)) != nil
          ? ["-j", String(argument.dropFirst(2))] : [argument]
      }
      for i in arguments.indices.dropLast().reversed()
      where ["-j", "--jobs"].contains(arguments[i]) && Int(arguments[i + 1]).map({ $0 < 1 }) == true {
        arguments[i...i + 1] = ["--jobs=\(arguments[i + 1])"]
      }
      if arguments.first == "graph" {
        var command = try GraphCommand.parseAsRoot(Array(arguments.dropFirst()))
        try command.run()
      } else if arguments.first == "test" {
        var command = try TestCommand.parseAsRoot(Array(arguments.dropFirst()))
        try command.run()
      } else if arguments.first == "repl" || (arguments.isEmpty && isatty(STDIN_FILENO) != 0) {
        var command = try ReplCommand.parseAsRoot(Array(arguments.dropFirst()))
        try command.run()
      } else {
        var command = try RunCommand.parseAsRoot(arguments)
        try command.run()
      }
    } catch let exit as Exit {
      leave(exit.code)
    } catch {
      let first = CommandLine.arguments.dropFirst().first
      let command: any ParsableCommand.Type = first == "graph" ? GraphCommand.self
        : first == "repl" ? ReplCommand.self : first == "test" ? TestCommand.self : RunCommand.self
      if command.exitCode(for: error) == .success {
        print(command.fullMessage(for: error))
        leave(0)
      }
      FileHandle.standardError.write(Data((command.fullMessage(for: error) + "\n").utf8))
      leave(ExitCode.usage.rawValue)
    }
  }

  /// Flushes output and ends the process at once: no atexit teardown while dispatch threads
  /// may still be reporting on children that were just killed.
  static func leave(_ code: Int32) -> Never {
    RunCommand.liveView?.restore()
    fflush(nil)
    _exit(code)
  }

  /// The end of every command that ran work: whatever the run left is ended (no descendant
  /// outlives taskrun), Lua's finalizers run, and the process exits with `code` (or the
  /// status `os.exit` asked for). A signal while finalizers run exits at once: a finalizer
  /// that loops cannot hold taskrun, and hooks do not run inside finalizers.
  static func finish(_ host: ScriptHost, code: Int32) -> Never {
    let scheduler = host.scheduler
    scheduler.processes.endDescendants()
    SignalWatcher.shared.attach(inbox: scheduler.inbox, processes: scheduler.processes) { _, _ in
      exitNow(ExitCode.interrupted.rawValue)
    }
    host.close()
    leave(host.exitCode ?? code)
  }

  /// Leaves from the signal watcher's thread (the third Ctrl-C): the cursor comes back, and
  /// running commands die with taskrun (PR_SET_PDEATHSIG).
  static func exitNow(_ code: Int32) -> Never {
    showCursor()
    _exit(code)
  }

  /// The cursor back, from any thread (one write), when the live view may have hidden it.
  static func showCursor() {
    if RunCommand.liveView != nil { _ = write(STDOUT_FILENO, LiveReporter.showCursor + "\n", 7) }
  }

  /// Sends a run's signals to `scheduler`: the first Ctrl-C stops Lua code at once (the
  /// scheduler then cancels everything), the third exits. Ctrl-Z restores the terminal first.
  /// Seconds an interrupt may stay unhandled before taskrun gives up on its Lua thread.
  static let stuckAfter = 1.5

  static func attachSignals(_ scheduler: Scheduler, thirdExits: Bool = true,
                            also: @escaping @Sendable () -> Void = {}) {
    SignalWatcher.shared.attach(
      inbox: scheduler.inbox, processes: scheduler.processes,
      immediately: { [inbox = scheduler.inbox, processes = scheduler.processes] _, count in
        ScriptHost.interruptLua(true)
        also()
        guard thirdExits else { return }
        if count >= 3 { exitNow(ExitCode.interrupted.rawValue) }
        // Lua code that runs without hooks (a looping __gc finalizer) never lets the
        // scheduler see the interrupt: after a while, end the run from here.
        let posted = inbox.signalsPosted.load(ordering: .sequentiallyConsistent)
        DispatchQueue.global().asyncAfter(deadline: .now() + stuckAfter) {
          guard inbox.signalsHandled.load(ordering: .sequentiallyConsistent) < posted else { return }
          FileHandle.standardError.write(Data(("taskrun: interrupted, but Lua code that cannot be interrupted "
            + "(a __gc finalizer?) holds the run; exiting\n").utf8))
          processes.endDescendants(within: 0.5)
          exitNow(ExitCode.interrupted.rawValue)
        }
      },
      onSuspend: { showCursor() },
      onResume: { LiveReporter.resumed.store(true, ordering: .sequentiallyConsistent) })
  }

  /// Ends the process with a code once output is flushed.
  struct Exit: Error {
    let code: Int32
    init(_ code: ExitCode) { self.code = code.rawValue }
  }
}

/// How progress is shown: `auto` is the live view on a terminal, plain lines elsewhere.
enum ProgressMode: String, ExpressibleByArgument, CaseIterable {
  case auto, tty, plain, none
}

struct RunCommand: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "taskrun",
    abstract: "Run task graphs declared in Lua: the targets and their dependencies (no target: everything the script declares).",
    usage: "taskrun [OPTIONS] SCRIPT [TARGET...] [-- ARGS...]",
    discussion: """
      Exit codes: 0 all succeeded; 1 an operation failed or was cancelled; 2 usage or \
      script error; 130 interrupted.
      """)

  @Option(name: [.customShort("j"), .customLong("jobs")], help: "Operations of the main queue that run at once (default: cores).")
  var jobs: Int?

  @Flag(name: [.customShort("k"), .customLong("keep-going")], help: "Keep starting independent operations after a failure.")
  var keepGoing = false

  @Flag(name: [.customShort("n"), .customLong("dry-run")], help: "Print the plan in execution order; run nothing.")
  var dryRun = false

  @Flag(name: .shortAndLong, help: "Print only failures and the summary.")
  var quiet = false

  @Flag(name: .shortAndLong, help: "Stream command output, prefixed with the operation's name.")
  var verbose = false

  @Option(help: "How to show progress: auto (live on a terminal, else plain), tty, plain or none.")
  var progress: ProgressMode = .auto

  @Flag(help: "Answer yes to every confirm(prompt) (needed when not on a terminal).")
  var yes = false

  @Flag(name: .customLong("no-color"), help: "No colour (also NO_COLOR=1).")
  var noColor = false

  @Option(help: ArgumentHelp("Write every event as a JSON line to FILE (- for standard error).", valueName: "file"))
  var events: String?

  @Option(help: ArgumentHelp("Write a Chrome trace-event file of the run (opens in Perfetto).", valueName: "file"))
  var trace: String?

  @Option(help: ArgumentHelp("Cap the Lua heap at MB megabytes: code that needs more fails with a clear error.", valueName: "MB"))
  var memory: Int?

  @Flag(help: "Run an untrusted script: no io, os (but time and getenv), package, debug, dofile, loadfile or binary chunks.")
  var sandbox = false

  @Option(name: .customLong("output-limit"), help: ArgumentHelp(
    "MB of one command's stdout (or stderr) kept in memory; the rest goes to a file (default 16).", valueName: "MB"))
  var outputLimit: Int?

  @Argument(help: "The workflow script.")
  var script: String

  @Argument(help: "Operations to run, with their dependencies.")
  var targets: [String] = []

  /// The live view, so that every way out restores the terminal.
  nonisolated(unsafe) static var liveView: LiveReporter?

  /// Arguments after `--`, for the script's `arg` table (split off before parsing).
  nonisolated(unsafe) static var scriptArguments: [String] = []

  func validate() throws {
    if let jobs, jobs < 1 { throw ValidationError("-j must be at least 1 (got \(jobs))") }
    if quiet && verbose { throw ValidationError("-q and -v cannot be used together") }
    if let memory, !(1...1_048_576).contains(memory) {
      throw ValidationError("--memory must be from 1 to 1048576 MB (got \(memory))")
    }
    if let outputLimit, !(1...65536).contains(outputLimit) {
      throw ValidationError("--output-limit must be from 1 to 65536 MB (got \(outputLimit))")
    }
  }

  func run() throws {
    let scheduler = Scheduler(jobs: jobs ?? ProcessInfo.processInfo.activeProcessorCount)
    scheduler.keepGoing = keepGoing
    if let outputLimit { ProcessRunner.memoryLimit = outputLimit << 20 }
    let isTerminal = isatty(STDOUT_FILENO) != 0 && ProcessInfo.processInfo.environment["TERM"] != "dumb"
    let live = progress == .tty || (progress == .auto && isTerminal)
    let color = ColorPolicy.decide(disabled: noColor, isTerminal: isTerminal)
    let reporter = PlainReporter(
      verbosity: progress == .none || quiet ? .quiet : verbose ? .verbose : .normal,
      color: color, showStarts: !live)
    if live && !quiet {
      let view = LiveReporter(lines: reporter, color: color)
      scheduler.sinks.append(view)
      scheduler.tickInterval = 1.0 / 15
      Self.liveView = view
    } else {
      scheduler.sinks.append(reporter)
    }
    do {
      if let events {
        scheduler.sinks.append(try EventsReporter(path: events))
        scheduler.tickInterval = 1.0 / 15
      }
      if let trace { scheduler.sinks.append(try TraceReporter(path: trace)) }
    } catch {
      reporter.error("\(error)")
      throw Taskrun.Exit(.usage)
    }
    Taskrun.attachSignals(scheduler)
    let host = ScriptHost(scheduler: scheduler, arguments: Self.scriptArguments, memoryLimit: (memory ?? 0) << 20)
    host.assumeYes = yes
    host.captureWrites = Self.liveView != nil
    host.dryRun = dryRun
    if sandbox { host.applySandbox() }
    if isatty(STDIN_FILENO) != 0 { host.ask = Terminal.ask }

    do {
      try host.load(path: script)
    } catch let error as HostError {
      // Stopped at the top level: what it started is cancelled; let it end and report it.
      if host.exitCode != nil || scheduler.halted {
        let summary = host.settle()
        if summary == nil && host.exitCode == nil { reporter.note("interrupted") }
        Taskrun.finish(host, code: ExitCode.interrupted.rawValue)
      }
      reporter.error(error.description)
      scheduler.processes.endDescendants()
      throw Taskrun.Exit(.usage)
    }
    if host.exitCode != nil {  // os.exit caught by a pcall at the top level: still the end
      _ = host.settle()
      Taskrun.finish(host, code: ExitCode.success.rawValue)
    }
    let selected: [OperationNode]
    do {
      selected = try host.select(targets: targets)
    } catch let error as HostError {
      reporter.error(error.description)
      throw Taskrun.Exit(.usage)
    }
    if dryRun {
      reporter.plan(scheduler.plan(for: selected))
      throw Taskrun.Exit(.success)
    }
    let summary = host.run(selected)
    let code: ExitCode = summary.interrupted ? .interrupted : summary.allSucceeded ? .success : .failure
    // The graph is not taken apart object by object (100,000 operations: 12 ms) since the
    // process ends here.
    Taskrun.finish(host, code: code.rawValue)
  }
}
