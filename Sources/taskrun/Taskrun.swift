// taskrun: the command line. Parses options, loads the script, runs it, maps outcomes to exit codes.
import ArgumentParser
import CTerminal
import FoundationEssentials
import Glibc
import LuaHost
import Synchronization
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
    // The locale's language for the progress words (--lang overrides it for a run).
    // Three variables read, not the whole environment made into a dictionary (~1.6M
    // instructions of start-up, callgrind).
    ProgressLanguage.current = .fromLocale(Environment.variable)
    // The command whose usage a usage error shows (`taskrun graph --help` for graph's).
    var usageCommand: any ParsableCommand.Type = RunCommand.self
    do {
      let arguments = Array(CommandLine.arguments.dropFirst())
      // Shell completion: the scripts, and what they ask on each Tab (before `--` is split off).
      if arguments.first == "--complete" && arguments.dropFirst().first == "--" {
        print(Completer.answer(Array(arguments.dropFirst(2))), terminator: "")
        leave(0)
      }
      if let first = arguments.first, first.hasPrefix("--generate-completion-script") {
        CompletionScripts.generate(
          first.contains("=") ? String(first.drop { $0 != "=" }.dropFirst()) : arguments.dropFirst().first)
      }
      let invocation = Invocation(arguments, interactive: isatty(STDIN_FILENO) != 0)
      let choice = CommandChoice(scriptArguments: invocation.scriptArguments)
      usageCommand = Self.command(for: invocation.subcommand)
      // A subcommand's name (first, or after the run's options) is a target where the script
      // taskrun finds (or -C DIR, -f FILE before it) declares it. `graph` draws the load this
      // check makes; the others do not need the script, and do not wait on one that does not
      // finish loading.
      if let index = invocation.subcommandIndex, let first = invocation.subcommand, !invocation.subcommandForced,
        try choice.isTarget(
          first, within: first == "graph" ? nil : CommandChoice.checkSeconds,
          keep: first == "graph", directory: invocation.leadingPlace.directory, file: invocation.leadingPlace.file)
      {
        usageCommand = RunCommand.self
        if let options = RunOptions.parse(invocation.words) { return try options.run(invocation) }
        // Parsed without the word, which swift-argument-parser would take for the subcommand.
        var words = invocation.words
        words.remove(at: index)
        var command = try RunCommand.parse(words)
        command.options.words.insert(first, at: 0)
        return try command.run(invocation, choice: choice)
      }
      let words = try invocation.subcommandWords()
      if words.first == "help" {  // `taskrun help [SUBCOMMAND]`
        let name = words.dropFirst().first
        guard
          let command = RunCommand.configuration.subcommands.first(where: { $0.configuration.commandName == name })
            ?? (name == nil ? RunCommand.self : nil)
        else {
          TerminalText.writeMessage(
            "taskrun: help: no subcommand '\(TerminalText.escaped(name!))' ("
              + CommandChoice.subcommands.joined(separator: ", ") + ")")
          leave(ExitCode.usage.rawValue)
        }
        print(RunCommand.helpMessage(for: command))
        leave(0)
      }
      let commandType = Self.command(for: words.first)
      if commandType == RunCommand.self, let options = RunOptions.parse(words) {
        try options.run(invocation)  // plain use, parsed without reflection (RunOptions.swift)
      } else {
        // graph, test and repl are RunCommand's subcommands (for help and completions), parsed
        // here: ArgumentParser gives a root with a positional argument no subcommands.
        let rest = Array(words.dropFirst())
        var command = try commandType.parseAsRoot(
          commandType == RunCommand.self
            ? words : commandType == TestCommand.self ? TestCommand.emptyValues(rest) : rest)
        if let command = invoked(command) {
          try command.run(invocation, choice: choice)
        } else {
          try command.run()
        }
      }
    } catch let exit as Exit {
      leave(exit.code)
    } catch let error as HostError {  // the script, loaded to choose between a target and a subcommand
      TerminalText.writeMessage("taskrun: \(error.description)")
      leave(ExitCode.usage.rawValue)
    } catch let error as Invocation.OptionNotTaken {
      TerminalText.writeMessage("taskrun: \(error.description)")
      TerminalText.writeMessage(
        "taskrun: see 'taskrun \(error.subcommand == "help" ? "" : error.subcommand + " ")--help'")
      leave(ExitCode.usage.rawValue)
    } catch {
      let command = usageCommand
      if command.exitCode(for: error) == .success {  // --help, --version, completion scripts
        print(command.fullMessage(for: error))
        leave(0)
      }
      // A usage error reads as every other message: `taskrun: WHY`, lower case, then where
      // help is (not swift-argument-parser's "Error:" and its whole usage banner); its guess
      // of an option is kept only when close (UsageMessage).
      let name = command == RunCommand.self ? "taskrun" : "taskrun \(command.configuration.commandName ?? "")"
      // An unknown option is shown as typed.
      for line in UsageMessage.inTaskrunsWords(command.message(for: error)) {
        TerminalText.writeMessage("taskrun: \(line)")
      }
      TerminalText.writeMessage("taskrun: see '\(name) --help'")
      leave(ExitCode.usage.rawValue)
    }
  }

  /// The subcommand a first word names, else RunCommand. A word that names none (the common
  /// case) makes no subcommand's configuration (about 30,000 instructions of start-up).
  static func command(for word: String?) -> any ParsableCommand.Type {
    guard let word, CommandChoice.subcommands.contains(word) else { return RunCommand.self }
    return RunCommand.configuration.subcommands.first { $0.configuration.commandName == word } ?? RunCommand.self
  }

  /// `command` as one run with its invocation. Cast to each type: a cast to the protocol
  /// would search every conformance in the binary (about 300,000 instructions, callgrind).
  static func invoked(_ command: any ParsableCommand) -> (any InvokedCommand)? {
    if let command = command as? RunCommand { return command }
    if let command = command as? ReplCommand { return command }
    if let command = command as? TestCommand { return command }
    if let command = command as? GraphCommand { return command }
    if let command = command as? StatusCommand { return command }
    if let command = command as? WatchCommand { return command }
    if let command = command as? CancelCommand { return command }
    if let command = command as? PauseCommand { return command }
    if let command = command as? ResumeCommand { return command }
    if let command = command as? WhyCommand { return command }
    if let command = command as? HistoryCommand { return command }
    if let command = command as? RunsCommand { return command }
    if let command = command as? ReportCommand { return command }
    return nil
  }

  /// The live view a session draws, if any: the one process-wide reference to it, kept for
  /// the way out that no session reaches (`leave`, after any command's error). Main thread
  /// only: set through `drawing` by the `Session` that draws it, read by `leave`.
  nonisolated(unsafe) private(set) static var shownLiveView: LiveReporter?
  /// Whether a live view is drawn, for the signal watcher's thread (Ctrl-Z, the third
  /// Ctrl-C, a stuck load), where `showCursor` must not touch the view itself.
  private static let liveViewDrawn = Atomic<Bool>(false)

  /// Records the live view a session draws (on the main thread), for the ways out.
  static func drawing(_ view: LiveReporter) {
    shownLiveView = view
    liveViewDrawn.store(true, ordering: .sequentiallyConsistent)
  }

  /// Flushes output and ends the process at once: no atexit teardown while dispatch threads
  /// may still be reporting on children that were just killed.
  static func leave(_ code: Int32) -> Never {
    RunRecording.current?.end(code: code)
    ControlSocket.removeAll()
    SpillFolder.shared.removeUnkept()
    Confinement.removeTemporaryFolders()
    shownLiveView?.restore()
    fflush(nil)
    _exit(code)
  }

  /// Leaves from the signal watcher's thread (the third Ctrl-C): the cursor comes back, and
  /// running commands die with taskrun (PR_SET_PDEATHSIG).
  static func exitNow(_ code: Int32) -> Never {
    ControlSocket.removeAll()
    SpillFolder.shared.removeUnkept()
    Confinement.removeTemporaryFolders()
    showCursor()
    _exit(code)
  }

  /// The live view's last lines (unless the main thread is writing them) and the cursor back,
  /// from any thread, when the live view may have hidden it.
  static func showCursor() {
    guard liveViewDrawn.load(ordering: .sequentiallyConsistent) else { return }
    ct_flush_stdout_if_free()
    _ = write(STDOUT_FILENO, LiveReporter.showCursor + "\n", 7)
  }

  /// Ends the process with a code once output is flushed.
  struct Exit: Error {
    let code: Int32
    init(_ code: ExitCode) { self.code = code.rawValue }
  }
}
