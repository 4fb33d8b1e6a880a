// RunOptions: what `taskrun [OPTIONS] [SCRIPT] [TARGET...]` asks for, and a parse of it without reflection.
import Glibc

/// The run command's options as a plain value. `RunCommand` (swift-argument-parser) makes
/// one; `parse` makes the same one for the common command lines without the reflection that
/// costs a first parse about 3 ms of start-up.
struct RunOptions: Equatable {
  var jobs: Int?
  var keepGoing = false
  var dryRun = false
  var quiet = false
  var verbose = false
  var progress: ProgressMode = .auto
  var yes = false
  var noColor = false
  var events: String?
  var trace: String?
  var memory: Int?
  var sandbox = false
  var outputLimit: Int?
  var outputFileLimit: Int?
  var file: String?
  var directory: String?
  var executor: ExecutorChoice?
  var list = false
  var listNames = false
  var words: [String] = []

  /// Why these options cannot run together, or nil.
  var problem: String? {
    if let jobs, jobs < 1 { return "-j must be at least 1 (got \(jobs))" }
    if quiet && verbose { return "-q and -v cannot be used together" }
    if let memory, !(1...1_048_576).contains(memory) {
      return "--memory must be from 1 to 1048576 MB (got \(memory))"
    }
    if let outputLimit, !(1...65536).contains(outputLimit) {
      return "--output-limit must be from 1 to 65536 MB (got \(outputLimit))"
    }
    if let outputFileLimit, !(1...1_048_576).contains(outputFileLimit) {
      return "--output-file-limit must be from 1 to 1048576 MB (got \(outputFileLimit))"
    }
    if let events, let trace, ReportFile.sameFile(events, trace) {
      return "--events and --trace name the same file ('\(trace)'): each needs its own"
    }
    return nil
  }

  /// The options of `arguments` (the words before `--`, `-j4` already split), or nil for
  /// anything but plain, valid use: help, version, completions, combined short flags, an
  /// option given twice, an unknown option or a bad value go to swift-argument-parser, which
  /// answers them. `RunOptionsTests` checks that both parsers agree wherever this one answers.
  static func parse(_ arguments: [String]) -> RunOptions? {
    var options = RunOptions()
    var seen: UInt32 = 0  // a bit per Key: a Set or a Dictionary here costs start-up a conformance search
    var i = 0
    while i < arguments.count {
      let argument = arguments[i]
      i += 1
      guard argument.hasPrefix("-"), argument != "-" else {
        options.words.append(argument)
        continue
      }
      var name = argument, value: String?
      if argument.hasPrefix("--"), let equals = argument.firstIndex(of: "=") {
        name = String(argument[..<equals])
        let given = String(argument[argument.index(after: equals)...])
        if given.isEmpty { return nil }  // `--events=` is a missing value
        value = given
      }
      guard let key = Key(spelling: name), seen & key.bit == 0 else { return nil }
      seen |= key.bit
      if key.takesValue && value == nil {
        // A value that looks like an option is one to swift-argument-parser: it decides.
        guard i < arguments.count, !arguments[i].hasPrefix("-") || arguments[i] == "-" else { return nil }
        value = arguments[i]
        i += 1
      } else if !key.takesValue && value != nil {
        return nil
      }
      guard options.set(key, value ?? "") else { return nil }
    }
    return options.problem == nil ? options : nil
  }

  /// An option, whatever its spelling (`RunOptionsTests` checks the spellings against the help).
  enum Key: Int {
    case jobs, keepGoing, dryRun, quiet, verbose, list, progress, executor, yes, noColor
    case sandbox, listNames, events, trace, file, directory, memory, outputLimit, outputFileLimit

    /// Every spelling with its option, searched in order (25 short strings).
    static let spellings: [(spelling: String, key: Key)] = [
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
      self = found.key
    }

    var bit: UInt32 { 1 << UInt32(rawValue) }

    var takesValue: Bool {
      switch self {
      case .jobs, .progress, .executor, .events, .trace, .file, .directory, .memory, .outputLimit, .outputFileLimit: true
      default: false
      }
    }
  }

  /// Sets what `key` says; false for a value it does not accept.
  private mutating func set(_ key: Key, _ value: String) -> Bool {
    switch key {
    case .keepGoing: keepGoing = true
    case .dryRun: dryRun = true
    case .quiet: quiet = true
    case .verbose: verbose = true
    case .list: list = true
    case .yes: yes = true
    case .noColor: noColor = true
    case .sandbox: sandbox = true
    case .listNames: listNames = true
    case .events: events = value
    case .trace: trace = value
    case .file: file = value
    case .directory: directory = value
    case .jobs: guard let n = Int(value) else { return false }; jobs = n
    case .memory: guard let n = Int(value) else { return false }; memory = n
    case .outputLimit: guard let n = Int(value) else { return false }; outputLimit = n
    case .outputFileLimit: guard let n = Int(value) else { return false }; outputFileLimit = n
    case .progress: guard let mode = ProgressMode(rawValue: value) else { return false }; progress = mode
    case .executor: guard let choice = ExecutorChoice(rawValue: value) else { return false }; executor = choice
    }
    return true
  }
}
