// RunOption: each option of `taskrun [OPTIONS] [SCRIPT] [TARGET...]` declared once: its spellings, its help and how its value is read.
import ArgumentParser

/// An option of the run command. Its spellings are what the quick parse (`RunOptions.parse`)
/// searches and what swift-argument-parser is given as the option's names (`names`), its
/// help is what `taskrun --help` shows, and `read` sets it in `RunOptions`: `RunCommand`'s
/// properties take their names and help from here, so the two parsers cannot disagree on
/// a spelling (`RunOptionsTests` checks that they agree on the values too).
enum RunOption: Int {
  case jobs, keepGoing, dryRun, quiet, verbose, list, progress, executor, yes, noColor
  case sandbox, listNames, events, trace, file, directory, memory, outputLimit, outputFileLimit

  /// Every spelling with its option, searched in order (25 short strings), short before long
  /// as the help lists them.
  static let spellings: [(spelling: String, option: RunOption)] = [
    ("-j", .jobs), ("--jobs", .jobs), ("-k", .keepGoing), ("--keep-going", .keepGoing),
    ("-n", .dryRun), ("--dry-run", .dryRun), ("-q", .quiet), ("--quiet", .quiet),
    ("-v", .verbose), ("--verbose", .verbose), ("-l", .list), ("--list", .list),
    ("--progress", .progress), ("--executor", .executor), ("--yes", .yes), ("--no-color", .noColor),
    ("--sandbox", .sandbox), ("--list-names", .listNames), ("--events", .events), ("--trace", .trace),
    ("-f", .file), ("-C", .directory), ("--memory", .memory), ("--output-limit", .outputLimit),
    ("--output-file-limit", .outputFileLimit),
  ]

  init?(spelling: String) {
    guard let found = Self.spellings.first(where: { $0.spelling == spelling }) else { return nil }
    self = found.option
  }

  /// A bit per option, for the quick parse's "given twice" check (a Set costs start-up a
  /// conformance search).
  var bit: UInt32 { 1 << UInt32(rawValue) }

  var takesValue: Bool {
    switch self {
    case .jobs, .progress, .executor, .events, .trace, .file, .directory, .memory, .outputLimit, .outputFileLimit: true
    default: false
    }
  }

  /// Sets what this option says in `options`; false for a value it does not accept.
  func read(_ value: String, into options: inout RunOptions) -> Bool {
    switch self {
    case .keepGoing: options.keepGoing = true
    case .dryRun: options.dryRun = true
    case .quiet: options.quiet = true
    case .verbose: options.verbose = true
    case .list: options.list = true
    case .yes: options.yes = true
    case .noColor: options.noColor = true
    case .sandbox: options.sandbox = true
    case .listNames: options.listNames = true
    case .events: options.events = value
    case .trace: options.trace = value
    case .file: options.file = value
    case .directory: options.directory = value
    case .jobs: guard let n = Int(value) else { return false }; options.jobs = n
    case .memory: guard let n = Int(value) else { return false }; options.memory = n
    case .outputLimit: guard let n = Int(value) else { return false }; options.outputLimit = n
    case .outputFileLimit: guard let n = Int(value) else { return false }; options.outputFileLimit = n
    case .progress: guard let mode = ProgressMode(rawValue: value) else { return false }; options.progress = mode
    case .executor: guard let choice = ExecutorChoice(rawValue: value) else { return false }; options.executor = choice
    }
    return true
  }

  /// The spellings as swift-argument-parser's names (read only when it parses).
  var names: NameSpecification { Self.allNames[rawValue] }

  /// Every option's names, made once: swift-argument-parser makes `RunCommand` several times
  /// in one parse, and `--version` or `--help` must not pay for the spellings each time.
  private static let allNames: [NameSpecification] = {
    var elements = [[NameSpecification.Element]](repeating: [], count: outputFileLimit.rawValue + 1)
    for (spelling, option) in spellings {
      elements[option.rawValue].append(spelling.hasPrefix("--") ? .customLong(String(spelling.dropFirst(2)))
        : .customShort(spelling.last!))
    }
    // Literals, not NameSpecification(sequence): its unspecialised generic init costs start-up
    // about 18,000 instructions an option (callgrind).
    return elements.map { $0.count == 1 ? [$0[0]] : $0.count == 2 ? [$0[0], $0[1]] : NameSpecification($0) }
  }()

  /// What `taskrun --help` says of the option.
  var help: ArgumentHelp {
    switch self {
    case .jobs: "Operations of the main queue that run at once (default: cores)."
    case .keepGoing: "Keep starting independent operations after a failure."
    case .dryRun: "Print the plan in execution order; run nothing."
    case .quiet: "Print only failures and the summary."
    case .verbose: "Stream command output, prefixed with the operation's name."
    case .progress: "How to show progress: auto (live on a terminal, else plain), tty, plain or none."
    case .yes: "Answer yes to every confirm(prompt) (needed when not on a terminal)."
    case .noColor: "No colour (also NO_COLOR=1)."
    case .events: ArgumentHelp("Write every event as a JSON line to FILE (- for standard error).", valueName: "file")
    case .trace: ArgumentHelp("Write a Chrome trace-event file of the run (opens in Perfetto; - for standard error).", valueName: "file")
    case .memory: ArgumentHelp("Cap the Lua heap at MB megabytes: code that needs more fails with a clear error.", valueName: "MB")
    case .sandbox: "Confine the script's Lua code: no io, os (but time and getenv), package, debug, dofile, loadfile or binary chunks. Commands are not confined: sh runs anything, so an untrusted script is not made safe."
    case .outputLimit: ArgumentHelp(
      "MB of one command's stdout (or stderr) kept in memory; the rest goes to a file (default 16).", valueName: "MB")
    case .outputFileLimit: ArgumentHelp(
      "MB of one stream kept in its file past --output-limit; past it the file keeps the beginning and the end (default 1024, or TASKRUN_OUTPUT_FILE_LIMIT).", valueName: "MB")
    case .file: ArgumentHelp("The workflow script (instead of finding taskrun.lua).", valueName: "file")
    case .directory: ArgumentHelp("Change to DIR first.", valueName: "dir")
    case .executor: ArgumentHelp("Where the operations' sh commands run: slurm (job steps inside an allocation, else batch jobs) or local; default: what each queue says.", valueName: "executor")
    case .list: "List the operations the script declares, with their desc; run nothing."
    case .listNames: .hidden
    }
  }
}
