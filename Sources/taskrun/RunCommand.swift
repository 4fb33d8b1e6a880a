// RunCommand: `taskrun [SCRIPT] [TARGET...]`: finds the script, runs its targets, lists them.
import ArgumentParser
import FoundationEssentials
import Glibc
import LuaHost
import TaskEngine

/// `--executor`: a cluster (Slurm) or this machine for every queue.
enum ExecutorChoice: String, ExpressibleByArgument, CaseIterable {
  case slurm, local
}

/// How progress is shown: `auto` is the live view on a terminal, plain lines elsewhere.
enum ProgressMode: String, ExpressibleByArgument, CaseIterable {
  case auto, tty, plain, none
}

struct RunCommand: ParsableCommand, InvokedCommand {
  static let configuration = CommandConfiguration(
    commandName: "taskrun",
    abstract: "Run task graphs declared in Lua: the targets and their dependencies (no target: everything the script declares).",
    usage: """
      taskrun [OPTIONS] [SCRIPT] [TARGET...] [-- ARGS...]
        taskrun build.lua test              run 'test' and what it needs
        taskrun -j4 -k                      ./taskrun.lua (or workflow.lua, here or above), all of it
        taskrun repl [SCRIPT]               a Lua prompt with the API:  taskrun repl build.lua
        taskrun test [ROOT...]              busted specs:               taskrun test -o TAP spec
        taskrun graph [SCRIPT] [TARGET...]  the graph, without running: taskrun graph build.lua | dot -Tsvg
        taskrun help [SUBCOMMAND]           this text, or a subcommand's
        taskrun -- test ...                 the subcommand, where the script has a target 'test'
      """,
    discussion: """
      Without SCRIPT (or -f), taskrun looks for taskrun.lua, then workflow.lua, in the \
      current folder and then its parents, and runs it in that folder. A first word is the \
      script when it is '-' (the script on standard input), ends in .lua, or names a file \
      whose first line is a #! line naming taskrun; any other word is a target. A first word \
      repl, test, graph or help is that subcommand unless the script found that way declares \
      a target of that name; 'taskrun -- SUBCOMMAND' is always the subcommand. \
      Exit codes: 0 all succeeded; 1 an operation failed or was cancelled, or --events or \
      --trace could not be written; 2 usage or script error; 130 interrupted.
      """,
    version: TaskrunVersion.text,
    subcommands: [ReplCommand.self, TestCommand.self, GraphCommand.self])

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

  @Option(help: ArgumentHelp("Write a Chrome trace-event file of the run (opens in Perfetto; - for standard error).", valueName: "file"))
  var trace: String?

  @Option(help: ArgumentHelp("Cap the Lua heap at MB megabytes: code that needs more fails with a clear error.", valueName: "MB"))
  var memory: Int?

  @Flag(help: "Confine the script's Lua code: no io, os (but time and getenv), package, debug, dofile, loadfile or binary chunks. Commands are not confined: sh runs anything, so an untrusted script is not made safe.")
  var sandbox = false

  @Option(name: .customLong("output-limit"), help: ArgumentHelp(
    "MB of one command's stdout (or stderr) kept in memory; the rest goes to a file (default 16).", valueName: "MB"))
  var outputLimit: Int?

  @Option(name: .customLong("output-file-limit"), help: ArgumentHelp(
    "MB of one stream kept in its file past --output-limit; past it the file keeps the beginning and the end (default 1024, or TASKRUN_OUTPUT_FILE_LIMIT).", valueName: "MB"))
  var outputFileLimit: Int?

  @Option(name: .customShort("f"), help: ArgumentHelp("The workflow script (instead of finding taskrun.lua).", valueName: "file"))
  var file: String?

  @Option(name: .customShort("C"), help: ArgumentHelp("Change to DIR first.", valueName: "dir"))
  var directory: String?

  @Option(help: ArgumentHelp("Where the operations' sh commands run: slurm (job steps inside an allocation, else batch jobs) or local; default: what each queue says.", valueName: "executor"))
  var executor: ExecutorChoice?

  @Flag(name: [.customShort("l"), .customLong("list")], help: "List the operations the script declares, with their desc; run nothing.")
  var list = false

  @Flag(name: .customLong("list-names"), help: .hidden)
  var listNames = false

  @Argument(help: ArgumentHelp("The workflow script (a .lua file, a file whose first line is #!…taskrun, or - for standard input), then operations to run with their dependencies.",
                               valueName: "script-and-targets"))
  var words: [String] = []

  /// What the command line asked for, as a plain value (the same one `RunOptions.parse` makes).
  var options: RunOptions {
    RunOptions(jobs: jobs, keepGoing: keepGoing, dryRun: dryRun, quiet: quiet, verbose: verbose,
               progress: progress, yes: yes, noColor: noColor, events: events, trace: trace,
               memory: memory, sandbox: sandbox, outputLimit: outputLimit,
               outputFileLimit: outputFileLimit, file: file,
               directory: directory, executor: executor, list: list, listNames: listNames, words: words)
  }

  func validate() throws {
    if let problem = options.problem { throw ValidationError(problem) }
  }

  func run(_ invocation: Invocation, choice: CommandChoice) throws { try options.run(invocation) }
}

extension RunOptions {
  /// `--output-file-limit`, else TASKRUN_OUTPUT_FILE_LIMIT: MB of one stream kept in its file
  /// past `--output-limit` (1 to 1048576, default 1024; the option is checked by `problem`);
  /// why the variable's value is refused, or nil. The option wins: the variable is not read.
  static func applyFileLimit(option: Int?, variable value: String?) -> String? {
    if let option {
      ProcessRunner.fileLimit = option << 20
      return nil
    }
    guard let value, !value.isEmpty else { return nil }
    guard let mb = Int(value), (1...1_048_576).contains(mb) else {
      return "TASKRUN_OUTPUT_FILE_LIMIT must be a whole number of MB from 1 to 1048576 (got '\(value)')"
    }
    ProcessRunner.fileLimit = mb << 20
    return nil
  }

  /// Runs the workflow: finds the script, loads it, runs its targets and reports.
  func run(_ invocation: Invocation) throws {
    if let outputLimit { ProcessRunner.memoryLimit = outputLimit << 20 }
    let isTerminal = Session.outputIsTerminal
    let live = progress == .tty || (progress == .auto && isTerminal)
    let reporter = PlainReporter(
      verbosity: progress == .none || quiet ? .quiet : verbose ? .verbose : .normal,
      color: ColorPolicy.decide(disabled: noColor, isTerminal: isTerminal), showStarts: !live)
    let session = Session(
      jobs: jobs, keepGoing: keepGoing, display: .lines(reporter, live: live && !quiet),
      host: .init(arguments: invocation.scriptArguments, memoryLimit: memory.map { $0 << 20 },
                  assumeYes: yes, asksOnTerminal: true))
    let scheduler = session.scheduler
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
      guard let report, let problem = ScriptOverwriteCheck.problem(
        option: option, report: report, script: script, folder: startFolder) else { continue }
      throw usage(problem)
    }
    // A dry run or a listing writes nothing: no report file is opened (opening empties it).
    let writesNothing = dryRun || list || listNames
    if writesNothing && (events != nil || trace != nil) {
      reporter.note("--events and --trace are not written by a dry run or a listing")
    }
    do {
      try session.addReports(events: writesNothing ? nil : events, trace: writesNothing ? nil : trace,
                             folder: reportFolder)
    } catch {
      throw usage("\(error)")
    }
    if let problem = Self.applyFileLimit(option: outputFileLimit,
                                          variable: Environment.variable("TASKRUN_OUTPUT_FILE_LIMIT")) {
      throw usage(problem)
    }
    session.attachSignals()
    let host = session.host
    host.dryRun = dryRun
    if sandbox { host.applySandbox() }
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
        session.finish(code: ExitCode.failure.rawValue)
      }
      reporter.error(error.description)
      scheduler.processes.endDescendants()
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
      reporter.plan(scheduler.plan(for: selected))
      if let caveat = host.dryRunCaveat { print(caveat) }
      throw Taskrun.Exit(.success)
    }
    let summary = host.run(selected)
    // The graph is not taken apart object by object (100,000 operations: 12 ms) since the
    // process ends here.
    session.finish(code: Session.exitCode(of: summary).rawValue)
  }
}
