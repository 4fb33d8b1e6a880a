// RunCommand: `taskrun [SCRIPT] [TARGET...]`: finds the script, runs its targets, lists them.
import ArgumentParser
import FoundationEssentials
import Glibc
import LuaHost
import TaskEngine

/// `--executor`: a cluster (Slurm) or this machine for every queue.
enum ExecutorChoice: String, ExpressibleByArgument, CaseIterable, ChoiceArgument {
  case slurm, local
}

/// `--lang`: the language of the progress words, the live view and the ETA (default: the
/// locale's, LC_ALL, LC_MESSAGES or LANG; English when it is none of these).
enum LanguageChoice: String, ExpressibleByArgument, CaseIterable, ChoiceArgument {
  case en, zh, ru
  var language: ProgressLanguage { ProgressLanguage(code: rawValue) ?? .english }
}

/// What `--sandbox` confines: the Lua code and every command, or (`--sandbox=lua`) the Lua
/// code only.
enum SandboxMode: Sendable {
  case commands, lua
}

/// `--sandbox-allow`: the kinds of widening (`sandbox = { … }` on an operation) honoured, as a
/// comma-separated list of read, write and network in any order.
struct SandboxAllowance: ExpressibleByArgument, CaseIterable, ChoiceArgument, Equatable {
  let kinds: Set<SandboxGrant.Kind>
  init?(rawValue: String) {
    var kinds = Set<SandboxGrant.Kind>()
    for word in rawValue.split(separator: ",", omittingEmptySubsequences: false) {
      guard let kind = SandboxGrant.Kind(rawValue: String(word)) else { return nil }
      kinds.insert(kind)
    }
    self.kinds = kinds
  }
  init?(argument: String) { self.init(rawValue: argument) }
  var rawValue: String { SandboxGrant.Kind.allCases.filter(kinds.contains).map(\.rawValue).joined(separator: ",") }
  static let allCases: [SandboxAllowance] = [
    "read", "write", "network", "read,write", "read,network", "write,network", "read,write,network"
  ].compactMap { SandboxAllowance(rawValue: $0) }
}

/// How progress is shown: `auto` is the live view on a terminal, plain lines elsewhere.
enum ProgressMode: String, ExpressibleByArgument, CaseIterable, ChoiceArgument {
  case auto, tty, plain, none
}

/// `taskrun [OPTIONS] [SCRIPT] [TARGET...]` as swift-argument-parser parses it: the help, the
/// usage errors and the command lines the quick parse (`RunOptions.parse`) leaves to it. Its
/// options are not properties: they come from `RunOption`'s declarations (RunCommandArguments.swift).
struct RunCommand: ParsableCommand, InvokedCommand {
  static let configuration = CommandConfiguration(
    commandName: "taskrun",
    abstract:
      "Run task graphs declared in Lua: the targets and their dependencies (no target: everything the script declares).",
    usage: """
      taskrun [OPTIONS] [SCRIPT] [TARGET...] [-- ARGS...]
        taskrun build.lua test              run 'test' and what it needs
        taskrun -j4 -k                      ./taskrun.lua (or workflow.lua, here or above), all of it
        taskrun repl [SCRIPT]               a Lua prompt with the API:  taskrun repl build.lua (also a bare
                                            taskrun on a terminal where no script is found)
        taskrun test [ROOT...]              busted specs:               taskrun test -o TAP spec
        taskrun graph [SCRIPT] [TARGET...]  the graph, without running: taskrun graph build.lua | dot -Tsvg
        taskrun runs [show ID | diff A B]   past runs of the run store: taskrun runs diff
        taskrun report [ID] [-o FILE]       a run as one HTML page:     taskrun report -o run.html
        taskrun help [SUBCOMMAND]           this text, or a subcommand's
        taskrun [OPTIONS] -- test ...       the subcommand, where the script has a target 'test'
      """,
    discussion: """
      Without SCRIPT (or -f), taskrun looks for taskrun.lua, then workflow.lua, in the \
      current folder and then its parents, and runs it in that folder. A first word is the \
      script when it is '-' (the script on standard input), ends in .lua, or names a file \
      whose first line is a #! line naming taskrun; any other word is a target. A first word \
      repl, test, graph or help is that subcommand unless the script found that way declares \
      a target of that name; 'taskrun -- SUBCOMMAND' is always the subcommand. After \
      options, the first word that is not an option is read the same way (taskrun -C w1 \
      graph), and the options before a subcommand are its own where it takes them (-C, -f \
      for graph and repl); any other is a usage error. A bare taskrun on a terminal where \
      no script is found opens the REPL. \
      Exit codes: 0 all succeeded; 1 an operation failed or was cancelled, or --events or \
      --trace could not be written; 2 usage or script error; 130 interrupted.
      """,
    version: TaskrunVersion.text,
    subcommands: [
      ReplCommand.self, TestCommand.self, GraphCommand.self, StatusCommand.self, WatchCommand.self, CancelCommand.self,
      PauseCommand.self, ResumeCommand.self, WhyCommand.self, HistoryCommand.self, RunsCommand.self,
      ReportCommand.self
    ])

  /// What the command line asked for: the value `RunOptions.parse` makes. swift-argument-parser
  /// sees the options' declarations instead of properties (RunCommandArguments.swift).
  var options = RunOptions()

  func validate() throws {
    if let problem = options.problem { throw ValidationError(problem) }
  }

  func run(_ invocation: Invocation, choice: CommandChoice) throws { try options.run(invocation) }
}

extension RunOptions {
  /// `--output-file-limit`, else TASKRUN_OUTPUT_FILE_LIMIT: MB of one stream kept in its file
  /// past `--output-limit` (1 to 1048576, default 1024; the option is checked by `problem`);
  /// why the variable's value is refused, or nil. The option wins: the variable is not read.
  static func applyFileLimit(option: Int?, variable value: String?, to limits: inout OutputLimits) -> String? {
    if let option {
      limits.file = option << 20
      return nil
    }
    guard let value, !value.isEmpty else { return nil }
    guard let mb = Int(value), (1...1_048_576).contains(mb) else {
      return "TASKRUN_OUTPUT_FILE_LIMIT must be a whole number of MB from 1 to 1048576 (got '\(value)')"
    }
    limits.file = mb << 20
    return nil
  }

  /// `--sandbox` (a run's or the REPL's): the Lua code loses what `sandbox.lua` takes, and with
  /// `.commands` every command is confined (`Confinement`, the script's folder writable;
  /// operations may widen it as `allowed` says) and `os.getenv` sees only what commands see.
  static func sandbox(_ session: Session, _ mode: SandboxMode, script: String, allowing allowed: Set<SandboxGrant.Kind>)
    throws(SandboxError)
  {
    guard mode == .commands else { return session.host.applySandbox(environment: nil) }
    let confinement = try confineCommands(of: session, script: script, allowing: allowed)
    session.host.applySandbox(environment: confinement.environment)
  }

  /// The usage error when the kernel cannot confine commands.
  static func cannotConfine(_ error: SandboxError) -> String {
    "--sandbox cannot confine commands here, so nothing runs: \(error.description) (--sandbox=lua confines the Lua code only)"
  }

  private static func confineCommands(of session: Session, script: String, allowing allowed: Set<SandboxGrant.Kind>)
    throws(SandboxError) -> Confinement
  {
    // The folder the script really is in: a link to it elsewhere (in the home folder, say)
    // does not make its own folder writable.
    let real = Confinement.resolved(ScriptHost.wholePath(script == "-" ? "." : script))
    let workflow = script == "-" ? real : Confinement.parent(real)
    let confinement = try Confinement(workflowFolder: workflow, environment: ProcessInfo.processInfo.environment)
    session.scheduler.processes.confinement = confinement
    session.host.commandSandbox = CommandSandbox(allowed: allowed)
    return confinement
  }

  /// The run store of the script's folder for this run: opened with its lock (read only for
  /// a dry run), the run recorded, `-B` and `--resume` applied.
  private func useStore(
    _ session: Session, script: String, targets: [String], reporter: PlainReporter, after previous: RunMemory?
  ) throws {
    func usage(_ message: String) -> Taskrun.Exit {
      reporter.error(message)
      return Taskrun.Exit(.usage)
    }
    if let previous {  // a cycle of -w: the same store, what the cycle before it ran resumed
      let memory = previous.next()
      if let run = previous.continuedRun { _ = memory.resume(run: run) }
      return remember(memory, in: session, script: script, targets: targets)
    }
    let memory: RunMemory?
    var told = false
    do {
      memory = try RunStoreAccess.memory(
        for: script, writing: !dryRun, warn: { reporter.error("warning: " + $0) },
        waiting: { pid in
          // Another run of this script holds its store: wait for it, as Ctrl-C allows.
          if !told {
            reporter.note(
              "waiting for another taskrun\(pid.map { " (pid \($0))" } ?? "") running this workflow here "
                + "(Ctrl-C stops waiting; --no-store runs without the run store)")
            told = true
          }
          session.scheduler.absorbSignals()
          return !session.scheduler.halted
        })
    } catch {
      if session.scheduler.halted { throw Taskrun.Exit(.interrupted) }
      throw usage("\(error)")
    }
    guard let memory else { return }
    // The run to resume is found before this run is recorded: a refused --resume is no run.
    if let resume {
      switch memory.resume(run: resume == 0 ? nil : Int64(resume)) {
      case .success(let run):
        reporter.note("resuming run \(run): what succeeded in it and is still up to date is reused")
      case .failure(let error): throw usage("--resume: \(error)")
      }
    }
    remember(memory, in: session, script: script, targets: targets)
  }

  /// `memory` is the run's: `-B` and the protected script applied, the run recorded.
  private func remember(_ memory: RunMemory, in session: Session, script: String, targets: [String]) {
    memory.always = always
    memory.watching = watch
    memory.protectedPaths = [Confinement.resolved(ScriptHost.wholePath(script))]
    if !dryRun {
      memory.begin(
        command: CommandLine.arguments.joined(separator: " "), targets: targets, at: RunStoreAccess.now,
        clock: session.scheduler.clock.now)
      session.recording = RunRecording(
        memory: memory, keeping: keepRuns ?? RunStore.defaultKeptRuns, scheduler: session.scheduler)
    }
    session.host.remember(memory)
  }

  /// Runs the workflow: finds the script, loads it, runs its targets and reports.
  func run(_ invocation: Invocation) throws {
    if let lang { ProgressLanguage.current = lang.language }
    let isTerminal = Session.outputIsTerminal
    let live = progress == .tty || (progress == .auto && isTerminal)
    let ci = CIFolding.detect()
    let mode = OutputMode.chosen(option: output, verbose: verbose, quiet: quiet, ci: ci)
    let reporter = PlainReporter(
      verbosity: mode.verbosity(quiet: quiet || progress == .none),
      color: ColorPolicy.decide(disabled: noColor, isTerminal: isTerminal), showStarts: !live)
    let through = mode.sink(before: reporter, ci: ci, limitMB: outputLimit)
    let session = Session(
      jobs: jobs, keepGoing: keepGoing, display: .lines(reporter, live: live && !quiet, through: through),
      host: .init(
        arguments: invocation.scriptArguments, memoryLimit: memory.map { $0 << 20 },
        assumeYes: yes, asksOnTerminal: true, answer: answer))
    let scheduler = session.scheduler
    if let outputLimit { scheduler.processes.outputLimits.memory = outputLimit << 20 }
    /// An error of the command line or the script: said, and the exit code 2.
    func usage(_ message: String) -> Taskrun.Exit {
      reporter.error(message)
      return Taskrun.Exit(.usage)
    }
    // The script first (it may change folder), so that no report file is opened over it;
    // report paths stay relative to where taskrun started.
    var start = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
    let startFolder = getcwd(&start, start.count).map { String(cString: $0) } ?? "."
    let here = open(".", O_RDONLY | O_DIRECTORY | O_CLOEXEC)
    let reportFolder = here >= 0 ? here : AT_FDCWD
    let (script, targets): (String, [String])
    do {
      (script, targets) = try ScriptFinder.resolve(file: file, directory: directory, words: words)
    } catch let error as HostError {
      throw usage(error.description)
    }
    for (option, report) in [("--events", events), ("--trace", trace)] {
      guard let report,
        let problem = ScriptOverwriteCheck.problem(
          option: option, report: report, script: script, folder: startFolder)
      else { continue }
      throw usage(problem)
    }
    // A dry run or a listing writes nothing: no report file is opened (opening empties it).
    let writesNothing = dryRun || list || listNames
    if writesNothing && (events != nil || trace != nil) {
      reporter.note("--events and --trace are not written by a dry run or a listing")
    }
    do {
      try session.addReports(
        events: writesNothing ? nil : events, trace: writesNothing ? nil : trace,
        folder: reportFolder)
    } catch {
      throw usage("\(error)")
    }
    if let problem = Self.applyFileLimit(
      option: outputFileLimit,
      variable: Environment.variable("TASKRUN_OUTPUT_FILE_LIMIT"),
      to: &scheduler.processes.outputLimits)
    {
      throw usage(problem)
    }
    if watch {
      try WatchCycles(options: self, reporter: reporter, script: script, targets: targets).run(first: session)
    }
    let selected = try load(session, script: script, targets: targets, reporter: reporter)
    let summary = session.host.run(selected)
    // The graph is not taken apart object by object (100,000 operations: 12 ms) since the
    // process ends here.
    session.finish(code: Session.exitCode(of: summary).rawValue)
  }

  /// Loads the script into `session` (after `previous`, the cycle of `-w` before this one)
  /// and selects its targets: the signals, the control socket, the run store, the sandbox
  /// and the executor first. A listing or a dry run ends here.
  func load(
    _ session: Session, script: String, targets: [String], reporter: PlainReporter, after previous: Session? = nil
  ) throws -> [OperationNode] {
    /// An error of the command line or the script: said, and the exit code 2.
    func usage(_ message: String) -> Taskrun.Exit {
      reporter.error(message)
      return Taskrun.Exit(.usage)
    }
    session.attachSignals()
    let writesNothing = dryRun || list || listNames
    if !writesNothing { session.publish(script: script) }
    if !noStore && !list && !listNames {
      try useStore(session, script: script, targets: targets, reporter: reporter, after: previous?.scheduler.memory)
    }
    let host = session.host
    let scheduler = session.scheduler
    host.dryRun = dryRun
    if let previous {  // a cycle of -w: the sandbox made for the first
      host.commandSandbox = previous.host.commandSandbox
      if let sandbox {
        host.applySandbox(environment: sandbox == .commands ? scheduler.processes.confinement?.environment : nil)
      }
    } else if let sandbox {
      do { try Self.sandbox(session, sandbox, script: script, allowing: sandboxAllow?.kinds ?? []) } catch {
        throw usage(Self.cannotConfine(error))
      }
    }
    if let executor {
      do { try host.chooseExecutor(executor.rawValue) } catch {
        throw usage("\(error)")
      }
    }

    if list || listNames {  // nothing runs, and what the script prints or writes is not the listing
      scheduler.sinks = [MessagesToStandardError()]
    }
    do {
      if list || listNames { try host.loadToRead(path: script) } else { try host.load(path: script) }
    } catch let error as HostError {
      // Stopped at the top level: what it started is cancelled; let it end and report it.
      session.finishIfStopped(noteInterrupted: true)
      if error.operationFailed {  // a top-level wait on a failed operation: a failed run, as run() is
        reporter.error(error.description)
        _ = session.settle()
        if watch { throw Taskrun.Exit(.failure) }  // -w waits for the next change
        session.finish(code: ExitCode.failure.rawValue)
      }
      reporter.error(error.description)
      if !watch { scheduler.processes.endDescendants() }  // -w: the services stay
      throw Taskrun.Exit(.usage)
    }
    if host.exitCode != nil {  // os.exit caught by a pcall at the top level: still the end
      _ = session.settle()
      session.finish(code: ExitCode.success.rawValue)
    }
    if list || listNames {
      print(ScriptFinder.listing(scheduler.operations, of: script, namesOnly: listNames), terminator: "")
      if let caveat = host.dryRunCaveat { writeStandardError(caveat + "\n") }
      throw Taskrun.Exit(.success)
    }
    let selected: [OperationNode]
    do {
      selected = try host.select(targets: targets)
    } catch let error as HostError {
      throw usage(error.description)
    }
    if dryRun {
      let plan = scheduler.plan(for: selected)
      let prediction = scheduler.predict(plan, slots: predict ? scheduler.mainQueue.maxConcurrent : nil)
      reporter.plan(plan, prediction: scheduler.memory == nil ? nil : prediction)
      if let caveat = host.dryRunCaveat { print(caveat) }
      throw Taskrun.Exit(.success)
    }
    if let blocks = session.blocks, blocks.keepsOrder {
      blocks.order(scheduler.plan(for: selected))  // the blocks in declaration order
    }
    return selected
  }
}
