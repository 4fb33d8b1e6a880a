// taskrun: the command line. Parses options, loads the script, runs it, maps outcomes to exit codes.
import ArgumentParser
import CTerminal
import Dispatch
import FoundationEssentials
import Glibc
import LuaHost
import TaskEngine

/// Exit codes: 0 all succeeded; 1 an operation failed or was cancelled, or --events or
/// --trace could not be written; 2 usage or script error; 130 interrupted.
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
    // A relative TMPDIR is taken from where taskrun started: -C and a command's cwd would
    // otherwise put spill files (and the commands' own temporary files) elsewhere than the
    // paths taskrun prints say.
    if let tmpdir = getenv("TMPDIR").map({ String(cString: $0) }), !tmpdir.isEmpty, !tmpdir.hasPrefix("/") {
      var folder = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
      if let cwd = getcwd(&folder, folder.count) { setenv("TMPDIR", String(cString: cwd) + "/" + tmpdir, 1) }
    }
    do {
      var arguments = Array(CommandLine.arguments.dropFirst())
      // Shell completion: the scripts, and what they ask on each Tab (before `--` is split off).
      if arguments.first == "--complete" && arguments.dropFirst().first == "--" {
        print(Completer.answer(Array(arguments.dropFirst(2))), terminator: "")
        leave(0)
      }
      if let first = arguments.first, first.hasPrefix("--generate-completion-script") {
        CompletionScripts.generate(first.contains("=") ? String(first.drop { $0 != "=" }.dropFirst()) : arguments.dropFirst().first)
      }
      // `taskrun -- test …`: the subcommand, whatever the script declares (CommandChoice).
      var subcommandForced = false
      if arguments.count > 1 && arguments[0] == "--" && CommandChoice.subcommands.contains(arguments[1]) {
        arguments.removeFirst()
        subcommandForced = true
      }
      // Everything after the first `--` belongs to the script (`arg`), not to taskrun.
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
      if arguments.isEmpty && isatty(STDIN_FILENO) != 0 {  // `taskrun` on a terminal: the REPL
        arguments = ["repl"]
        subcommandForced = true
      }
      // A subcommand's name is a target where the script taskrun finds declares it. `graph`
      // draws the load this check makes; the others do not need the script, and do not
      // wait on one that does not finish loading.
      if let first = arguments.first, !subcommandForced, CommandChoice.subcommands.contains(first),
         try CommandChoice.isTarget(first, within: first == "graph" ? nil : CommandChoice.checkSeconds,
                                    keep: first == "graph") {
        if let options = RunOptions.parse(arguments) { return try options.run() }
        // Parsed without the word, which swift-argument-parser would take for the subcommand.
        var command = try RunCommand.parse(Array(arguments.dropFirst()))
        command.words.insert(first, at: 0)
        return try command.run()
      }
      if arguments.first == "help" {  // `taskrun help [SUBCOMMAND]`
        let name = arguments.dropFirst().first
        guard let command = RunCommand.configuration.subcommands.first(where: { $0.configuration.commandName == name })
                ?? (name == nil ? RunCommand.self : nil) else {
          TerminalText.writeMessage("taskrun: help: no subcommand '\(TerminalText.escaped(name!))' (repl, test, graph, help)")
          leave(ExitCode.usage.rawValue)
        }
        print(RunCommand.helpMessage(for: command))
        leave(0)
      }
      let commandType = Self.command(for: arguments.first)
      if commandType == RunCommand.self, let options = RunOptions.parse(arguments) {
        try options.run()  // plain use, parsed without reflection (RunOptions.swift)
      } else {
        // graph, test and repl are RunCommand's subcommands (for help and completions), parsed
        // here: ArgumentParser gives a root with a positional argument no subcommands.
        var command = try commandType.parseAsRoot(
          commandType == RunCommand.self ? arguments : Array(arguments.dropFirst()))
        try command.run()
      }
    } catch let exit as Exit {
      leave(exit.code)
    } catch let error as HostError {  // the script, loaded to choose between a target and a subcommand
      TerminalText.writeMessage("taskrun: \(error.description)")
      leave(ExitCode.usage.rawValue)
    } catch {
      let words = CommandLine.arguments.dropFirst()
      let command = Self.command(for: words.first == "--" ? words.dropFirst().first : words.first)
      if command.exitCode(for: error) == .success {  // --help, --version, completion scripts
        print(command.fullMessage(for: error))
        leave(0)
      }
      // A usage error reads as every other message: `taskrun: WHY`, then where help is
      // (not swift-argument-parser's "Error:" and its whole usage banner); its guess of an
      // option is kept only when close (UsageMessage).
      let name = command == RunCommand.self ? "taskrun" : "taskrun \(command.configuration.commandName ?? "")"
      TerminalText.writeMessage("taskrun: \(UsageMessage.withoutDistantGuess(command.message(for: error)))")  // an unknown option is shown as typed
      TerminalText.writeMessage("taskrun: see '\(name) --help'")
      leave(ExitCode.usage.rawValue)
    }
  }

  /// The subcommand a first word names, else RunCommand.
  static func command(for word: String?) -> any ParsableCommand.Type {
    RunCommand.configuration.subcommands.first { $0.configuration.commandName == word } ?? RunCommand.self
  }

  /// Flushes output and ends the process at once: no atexit teardown while dispatch threads
  /// may still be reporting on children that were just killed.
  static func leave(_ code: Int32) -> Never {
    SpillFolder.shared.removeUnkept()
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
    scheduler.endExecutors()  // Slurm jobs of the run are cancelled by name
    SignalWatcher.shared.attach(inbox: scheduler.inbox, processes: scheduler.processes) { _, _ in
      exitNow(ExitCode.interrupted.rawValue)
    }
    host.close()
    let status = host.exitCode ?? code
    // An --events or --trace file that could not be written (ReportFile said why): the
    // run's record is incomplete, so the run did not succeed as asked.
    leave(status == 0 && ReportFile.failures.load(ordering: .sequentiallyConsistent) > 0
      ? ExitCode.failure.rawValue : status)
  }

  /// Leaves from the signal watcher's thread (the third Ctrl-C): the cursor comes back, and
  /// running commands die with taskrun (PR_SET_PDEATHSIG).
  static func exitNow(_ code: Int32) -> Never {
    SpillFolder.shared.removeUnkept()
    showCursor()
    _exit(code)
  }

  /// The live view's last lines (unless the main thread is writing them) and the cursor back,
  /// from any thread, when the live view may have hidden it.
  static func showCursor() {
    guard RunCommand.liveView != nil else { return }
    ct_flush_stdout_if_free()
    _ = write(STDOUT_FILENO, LiveReporter.showCursor + "\n", 7)
  }

  /// Sends a run's signals to `scheduler`: the first Ctrl-C stops Lua code at once (the
  /// scheduler then cancels everything), the third exits (`thirdExits`: not in the REPL,
  /// which survives Ctrl-C, though its Lua is woken from a blocking read as a run's is).
  /// Ctrl-Z restores the terminal first.
  /// Seconds an interrupt may stay unhandled before the Lua thread is woken from a blocking
  /// call (io.read on a terminal, a read of an io.popen pipe), and before taskrun gives up on it.
  static let wakeAfter = 0.1
  static let stuckAfter = 1.5

  static func attachSignals(_ scheduler: Scheduler, thirdExits: Bool = true,
                            also: @escaping @Sendable () -> Void = {}) {
    ScriptHost.prepareWakeup()
    SignalWatcher.shared.attach(
      inbox: scheduler.inbox, processes: scheduler.processes,
      immediately: { [inbox = scheduler.inbox, processes = scheduler.processes] _, count in
        ScriptHost.interruptLua(true)
        also()
        if thirdExits && count >= 3 { exitNow(ExitCode.interrupted.rawValue) }
        // Lua blocked in a system call (io.read of a terminal, a pipe's read) sees the
        // interrupt only when the call returns: it is made to return (EINTR), and the hook
        // raises `interrupted` at the next instruction. The REPL's evaluations too: it
        // once skipped this, and io.read() or an io.popen read ignored Ctrl-C.
        let posted = inbox.signalsPosted.load(ordering: .sequentiallyConsistent)
        DispatchQueue.global().asyncAfter(deadline: .now() + wakeAfter) {
          guard inbox.signalsHandled.load(ordering: .sequentiallyConsistent) < posted else { return }
          ScriptHost.wakeLuaThread()
        }
        guard thirdExits else { return }  // the REPL's prompt leaves Ctrl-C unhandled: no exit
        // Lua code that runs without hooks (a looping __gc finalizer) never lets the
        // scheduler see the interrupt: after a while, end the run from here.
        DispatchQueue.global().asyncAfter(deadline: .now() + stuckAfter) {
          guard inbox.signalsHandled.load(ordering: .sequentiallyConsistent) < posted else { return }
          writeStandardError("taskrun: interrupted, but Lua code that cannot be interrupted "
            + "(a __gc finalizer?) holds the run; exiting\n")
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

