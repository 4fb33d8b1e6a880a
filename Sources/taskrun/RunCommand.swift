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

struct RunCommand: ParsableCommand {
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

  /// The live view, so that every way out restores the terminal.
  nonisolated(unsafe) static var liveView: LiveReporter?

  /// Arguments after `--`, for the script's `arg` table (split off before parsing).
  nonisolated(unsafe) static var scriptArguments: [String] = []

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

  func run() throws { try options.run() }
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

  /// Runs the workflow: finds the script, loads it, runs its targets and reports.
  func run() throws {
    let scheduler = Scheduler(jobs: jobs ?? Environment.processorCount)
    scheduler.keepGoing = keepGoing
    if let outputLimit { scheduler.processes.outputLimits.memory = outputLimit << 20 }
    let isTerminal = isatty(STDOUT_FILENO) != 0 && Environment.variable("TERM") != "dumb"
    let live = progress == .tty || (progress == .auto && isTerminal)
    let color = ColorPolicy.decide(disabled: noColor, isTerminal: isTerminal)
    let reporter = PlainReporter(
      verbosity: progress == .none || quiet ? .quiet : verbose ? .verbose : .normal,
      color: color, showStarts: !live)
    if live && !quiet {
      let view = LiveReporter(lines: reporter, color: color)
      scheduler.sinks.append(view)
      scheduler.tickInterval = 1.0 / 15
      RunCommand.liveView = view
    } else {
      scheduler.sinks.append(reporter)
    }
    // The script first (it may change folder), so that no report file is opened over it;
    // report paths stay relative to where taskrun started.
    var start = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
    let startFolder = getcwd(&start, start.count).map { String(cString: $0) } ?? "."
    let here = open(".", O_RDONLY | O_DIRECTORY | O_CLOEXEC)
    if here >= 0 { ReportFile.folder = here }
    let (script, targets): (String, [String])
    do {
      (script, targets) = try ScriptFinder.resolve(file: file, directory: directory, words: words)
    } catch let error as HostError {
      reporter.error(error.description)
      throw Taskrun.Exit(.usage)
    }
    for (option, report) in [("--events", events), ("--trace", trace)] {
      guard let report, let problem = ScriptOverwriteCheck.problem(
        option: option, report: report, script: script, folder: startFolder) else { continue }
      reporter.error(problem)
      throw Taskrun.Exit(.usage)
    }
    // A dry run or a listing writes nothing: no report file is opened (opening empties it).
    let writesNothing = dryRun || list || listNames
    if writesNothing && (events != nil || trace != nil) {
      reporter.note("--events and --trace are not written by a dry run or a listing")
    }
    let (events, trace) = writesNothing ? (nil, nil) : (self.events, self.trace)
    do {
      if let events {
        let sink = try EventsReporter(path: events)
        // On the terminal the live view is on, the events' lines go above it, not through it.
        if events == "-", isatty(STDERR_FILENO) != 0, let view = RunCommand.liveView {
          view.eventsAbove = sink
          let sinks = scheduler.sinks
          scheduler.sinks = sinks  // the view's interests now include the events'
        } else {
          scheduler.sinks.append(sink)
        }
        scheduler.tickInterval = 1.0 / 15
      }
      if let trace { scheduler.sinks.append(try TraceReporter(path: trace)) }
    } catch {
      reporter.error("\(error)")
      throw Taskrun.Exit(.usage)
    }
    if let problem = Self.applyFileLimit(option: outputFileLimit,
                                          variable: Environment.variable("TASKRUN_OUTPUT_FILE_LIMIT"),
                                          to: &scheduler.processes.outputLimits) {
      reporter.error(problem)
      throw Taskrun.Exit(.usage)
    }
    Taskrun.attachSignals(scheduler)
    let host = ScriptHost(scheduler: scheduler, arguments: RunCommand.scriptArguments, memoryLimit: memory.map { $0 << 20 })
    host.assumeYes = yes
    host.captureWrites = RunCommand.liveView != nil
    host.dryRun = dryRun
    if sandbox { host.applySandbox() }
    if let executor {
      do { try host.chooseExecutor(executor.rawValue) } catch {
        reporter.error("\(error)")
        throw Taskrun.Exit(.usage)
      }
    }
    if isatty(STDIN_FILENO) != 0 { host.ask = Terminal.ask }

    if list || listNames {  // nothing runs, and what the script prints or writes is not the listing
      scheduler.sinks = [MessagesToStandardError()]
    }
    do {
      if list || listNames { try host.loadToRead(path: script) } else { try host.load(path: script) }
    } catch let error as HostError {
      // Stopped at the top level: what it started is cancelled; let it end and report it.
      if host.exitCode != nil || scheduler.halted {
        let summary = host.settle()
        if summary == nil && host.exitCode == nil { reporter.note("interrupted") }
        Taskrun.finish(host, code: ExitCode.interrupted.rawValue)
      }
      if error.operationFailed {  // a top-level wait on a failed operation: a failed run, as run() is
        reporter.error(error.description)
        _ = host.settle()
        Taskrun.finish(host, code: ExitCode.failure.rawValue)
      }
      reporter.error(error.description)
      scheduler.processes.endDescendants()
      throw Taskrun.Exit(.usage)
    }
    if host.exitCode != nil {  // os.exit caught by a pcall at the top level: still the end
      _ = host.settle()
      Taskrun.finish(host, code: ExitCode.success.rawValue)
    }
    if list || listNames {
      print(ScriptFinder.listing(host.scheduler.operations, of: script, namesOnly: listNames), terminator: "")
      if let caveat = host.dryRunCaveat { writeStandardError(caveat + "\n") }
      throw Taskrun.Exit(.success)
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
      if let caveat = host.dryRunCaveat { print(caveat) }
      throw Taskrun.Exit(.success)
    }
    let summary = host.run(selected)
    let code: ExitCode = summary.interrupted ? .interrupted : summary.allSucceeded ? .success : .failure
    // The graph is not taken apart object by object (100,000 operations: 12 ms) since the
    // process ends here.
    Taskrun.finish(host, code: code.rawValue)
  }
}
