// RunOption: each option of `taskrun [OPTIONS] [SCRIPT] [TARGET...]` declared once: its spellings, its value, its help and where the value lands.
import ArgumentParser

/// An option of the run command, declared once in `declaration`: its spellings are what the
/// quick parse (`RunOptions.parse`) searches and what swift-argument-parser is given as the
/// option's names (`names`); its value says what the quick parse reads and what a shell
/// completes after it (`Completer.run`); its help is what `taskrun --help` shows (`help`);
/// `land` sets it in `RunOptions`. swift-argument-parser's arguments of `RunCommand` are made
/// from here too (RunCommandArguments.swift), so the parsers cannot disagree on a spelling
/// (`RunOptionsTests` checks that they agree on the values too).
enum RunOption: Int, CaseIterable {
  // In the order a completion offers them: flags, files, folders, words, numbers.
  case keepGoing, dryRun, quiet, verbose, yes, noColor, sandbox, sandboxLua, list
  case always, noStore, resume, predict, watch
  case file, events, trace, directory, progress, output, executor, sandboxAllow, lang, answer
  case jobs, memory, outputLimit, outputFileLimit, listNames, keepRuns, resumeRun, debounce

  /// What follows an option: what the quick parse reads, and what a completion offers.
  enum Value: Sendable {
    case flag  // nothing
    case number  // a whole number
    case file, folder  // a path: a completion offers files, or folders
    case word  // any text: a completion offers nothing
    /// One of the words of a type; `current` reads the option from `RunOptions` (nil where
    /// it has no value), so `RunOptions()` gives its default.
    case choice(any ChoiceArgument.Type, current: @Sendable (RunOptions) -> String?)
  }

  /// Everything about one option.
  struct Declaration: Sendable {
    /// Its spellings: no array (the quick parse would pay for the first use of its type).
    var short: String?, long: String?
    let value: Value
    /// The help's text (empty for a hidden option) and the name it gives the value.
    let text: String
    var valueName: String?
    /// Sets the value in the options; false for one the option does not accept.
    let land: @Sendable (inout RunOptions, String) -> Bool

    /// Short before long, as the help lists them.
    var spellings: [String] { [short, long].compactMap { $0 } }
  }

  /// The option's declaration (made on each use, not kept in a table: the quick parse reads
  /// two or three, and making all of them costs start-up about 20,000 instructions).
  var declaration: Declaration {
    switch self {
    case .jobs:
      Declaration(
        short: "-j", long: "--jobs", value: .number,
        text: "Operations of the main queue that run at once (default: cores)."
      ) {
        $0.jobs = Int($1); return $0.jobs != nil
      }
    case .keepGoing:
      Declaration(
        short: "-k", long: "--keep-going", value: .flag,
        text: "Keep starting independent operations after a failure."
      ) { o, _ in
        o.keepGoing = true; return true
      }
    case .dryRun:
      Declaration(
        short: "-n", long: "--dry-run", value: .flag,
        text: "Print the plan in execution order; run nothing."
      ) { o, _ in
        o.dryRun = true; return true
      }
    case .quiet:
      Declaration(
        short: "-q", long: "--quiet", value: .flag,
        text: "Print only failures and the summary."
      ) { o, _ in
        o.quiet = true; return true
      }
    case .verbose:
      Declaration(
        short: "-v", long: "--verbose", value: .flag,
        text: "Stream command output, prefixed with the operation's name."
      ) { o, _ in
        o.verbose = true; return true
      }
    case .progress:
      Declaration(
        long: "--progress", value: .choice(ProgressMode.self, current: { $0.progress.rawValue }),
        text: "How to show progress: auto (live on a terminal, else plain), tty, plain or none."
      ) {
        guard let mode = ProgressMode(rawValue: $1) else { return false }
        $0.progress = mode
        return true
      }
    case .output:
      Declaration(
        long: "--output", value: .choice(OutputMode.self, current: { $0.output?.rawValue }),
        text:
          "How commands' output is shown: stream (a failure's only; the default), prefixed (every line as [name] line, as -v), group (each finished operation's output as one block), keep-order (the blocks in declaration order) or errors (only the operations that failed by themselves, and a line per failure for what it stopped). On CI (GITHUB_ACTIONS, GITLAB_CI, BUILDKITE) the default is group, with blocks folded.",
        valueName: "mode"
      ) {
        guard let mode = OutputMode(rawValue: $1) else { return false }
        $0.output = mode
        return true
      }
    case .yes:
      Declaration(
        long: "--yes", value: .flag,
        text: "Answer yes to every confirm(prompt) (needed when not on a terminal)."
      ) { o, _ in
        o.yes = true; return true
      }
    case .noColor:
      Declaration(
        long: "--no-color", value: .flag,
        text: "No colour (also NO_COLOR=1)."
      ) { o, _ in
        o.noColor = true; return true
      }
    case .events:
      Declaration(
        long: "--events", value: .file,
        text: "Write every event as a JSON line to FILE (- for standard error).", valueName: "file"
      ) {
        $0.events = $1; return true
      }
    case .trace:
      Declaration(
        long: "--trace", value: .file,
        text: "Write a Chrome trace-event file of the run (opens in Perfetto; - for standard error).", valueName: "file"
      ) {
        $0.trace = $1; return true
      }
    case .memory:
      Declaration(
        long: "--memory", value: .number,
        text: "Cap the Lua heap at MB megabytes: code that needs more fails with a clear error.", valueName: "MB"
      ) {
        $0.memory = Int($1); return $0.memory != nil
      }
    case .sandbox:
      Declaration(
        long: "--sandbox", value: .flag,
        text:
          "For untrusted scripts: Lua loses io, os (but time and getenv), package, debug, dofile and loadfile, and every command runs confined: it reads the system and the script's folder, writes the script's folder and a private TMPDIR, has no network, signals nothing outside, gets a minimal environment. --sandbox=lua confines the Lua code only. Refuses to run where the kernel cannot confine (Landlock ABI 6, namespaces)."
      ) { o, _ in
        o.sandbox = o.sandbox ?? .commands; return o.sandbox == .commands
      }
    case .sandboxLua:
      Declaration(long: "--sandbox-lua", value: .flag, text: "") { o, _ in
        o.sandbox = o.sandbox ?? .lua; return o.sandbox == .lua
      }
    case .sandboxAllow:
      Declaration(
        long: "--sandbox-allow", value: .choice(SandboxAllowance.self, current: { $0.sandboxAllow?.rawValue }),
        text:
          "With --sandbox: what operations may widen with sandbox = { read =, write =, network = } (a list of read, write, network); other requests are errors.",
        valueName: "list"
      ) {
        guard let allowance = SandboxAllowance(rawValue: $1) else { return false }
        $0.sandboxAllow = allowance
        return true
      }
    case .outputLimit:
      Declaration(
        long: "--output-limit", value: .number,
        text: "MB of one command's stdout (or stderr) kept in memory; the rest goes to a file (default 16).",
        valueName: "MB"
      ) {
        $0.outputLimit = Int($1); return $0.outputLimit != nil
      }
    case .outputFileLimit:
      Declaration(
        long: "--output-file-limit", value: .number,
        text:
          "MB of one stream kept in its file past --output-limit; past it the file keeps the beginning and the end (default 1024, or TASKRUN_OUTPUT_FILE_LIMIT).",
        valueName: "MB"
      ) {
        $0.outputFileLimit = Int($1); return $0.outputFileLimit != nil
      }
    case .file:
      Declaration(
        short: "-f", value: .file,
        text: "The workflow script (instead of finding taskrun.lua).", valueName: "file"
      ) {
        $0.file = $1; return true
      }
    case .directory:
      Declaration(short: "-C", value: .folder, text: "Change to DIR first.", valueName: "dir") {
        $0.directory = $1; return true
      }
    case .executor:
      Declaration(
        long: "--executor", value: .choice(ExecutorChoice.self, current: { $0.executor?.rawValue }),
        text:
          "Where the operations' sh commands run: slurm (job steps inside an allocation, else batch jobs) or local; default: what each queue says.",
        valueName: "executor"
      ) {
        guard let choice = ExecutorChoice(rawValue: $1) else { return false }
        $0.executor = choice
        return true
      }
    case .answer:
      Declaration(
        long: "--answer", value: .word,
        text: "The choice every choose() and choice condition that offers it takes at once (a name or a number).",
        valueName: "choice"
      ) {
        guard !$1.isEmpty else { return false }
        $0.answer = $1
        return true
      }
    case .lang:
      Declaration(
        long: "--lang", value: .choice(LanguageChoice.self, current: { $0.lang?.rawValue }),
        text:
          "The language of progress descriptions, the live view and the ETA: en, zh (Simplified Chinese) or ru; default: the locale's (LC_ALL, LC_MESSAGES, LANG), else en.",
        valueName: "lang"
      ) {
        guard let choice = LanguageChoice(rawValue: $1) else { return false }
        $0.lang = choice
        return true
      }
    case .list:
      Declaration(
        short: "-l", long: "--list", value: .flag,
        text: "List the operations the script declares, with their desc; run nothing."
      ) { o, _ in
        o.list = true; return true
      }
    case .listNames:
      Declaration(long: "--list-names", value: .flag, text: "") { o, _ in
        o.listNames = true; return true
      }
    case .always:
      Declaration(
        short: "-B", long: "--always", value: .flag,
        text: "Run every operation, even those the run store finds up to date (make's -B)."
      ) { o, _ in
        o.always = true; return true
      }
    case .noStore:
      Declaration(
        long: "--no-store", value: .flag,
        text:
          "Run without the run store (.taskrun/ in the script's folder): nothing is up to date, nothing is recorded, no history."
      ) { o, _ in
        o.noStore = true; return true
      }
    case .keepRuns:
      Declaration(
        long: "--keep-runs", value: .number,
        text: "How many runs the run store keeps (1 to 100000, default 100); older ones are dropped.", valueName: "N"
      ) {
        $0.keepRuns = Int($1); return $0.keepRuns != nil
      }
    case .resume:
      Declaration(
        long: "--resume", value: .flag,
        text:
          "Resume the last run recorded here (--resume=RUN: that run): what succeeded in it and is still up to date is reused, the rest runs."
      ) { o, _ in
        o.resume = o.resume ?? 0; return true
      }
    case .resumeRun:
      Declaration(long: "--resume-run", value: .word, text: "") {
        $0.resume = Int($1).map { $0 >= 1 ? $0 : -1 } ?? -1  // checked by `problem`, which says what a run id is
        return true
      }
    case .predict:
      Declaration(
        long: "--predict", value: .flag,
        text: "With -n: the run's predicted time at -j and its critical path, from the run store's history."
      ) { o, _ in
        o.predict = true; return true
      }
    case .watch:
      Declaration(
        short: "-w", long: "--watch", value: .flag,
        text:
          "Run, then watch the inputs, the script and its Lua files; on a change, rerun what it made out of date (Ctrl-C ends)."
      ) { o, _ in
        o.watch = true; return true
      }
    case .debounce:
      Declaration(
        long: "--debounce", value: .number,
        text: "With -w: milliseconds without a change before a cycle starts (0 to 10000, default 100).", valueName: "ms"
      ) {
        $0.debounce = Int($1); return $0.debounce != nil
      }
    }
  }

  /// The order `taskrun --help` lists them in (swift-argument-parser's, `RunCommand`'s
  /// arguments).
  static let helpOrder: [RunOption] = [
    .jobs, .keepGoing, .dryRun, .quiet, .verbose, .output, .progress, .yes, .noColor, .events, .trace, .memory,
    .sandbox,
    .answer, .sandboxAllow, .sandboxLua, .outputLimit, .outputFileLimit, .file, .directory, .executor, .lang,
    .list, .listNames, .always, .noStore, .keepRuns, .resume, .resumeRun, .predict, .watch, .debounce
  ]

  /// Every spelling with its option, in the options' order.
  static var spellings: [(spelling: String, option: RunOption)] {
    allCases.flatMap { option in option.declaration.spellings.map { ($0, option) } }
  }

  init?(spelling: String) {
    guard
      let option = Self.allCases.first(where: { $0.declaration.short == spelling || $0.declaration.long == spelling })
    else {
      return nil
    }
    self = option
  }

  /// A bit per option, for the quick parse's "given twice" check (a Set costs start-up a
  /// conformance search).
  var bit: UInt64 { 1 << UInt64(rawValue) }

  var takesValue: Bool {
    if case .flag = declaration.value { return false }
    return true
  }

  /// Sets what this option says in `options`; false for a value it does not accept.
  func read(_ value: String, into options: inout RunOptions) -> Bool { declaration.land(&options, value) }

  /// The spellings as swift-argument-parser's names (read only when it parses).
  var names: NameSpecification { Self.allNames[rawValue] }

  /// Every option's names, made once: swift-argument-parser makes `RunCommand` several times
  /// in one parse, and `--version` or `--help` must not pay for the spellings each time.
  private static let allNames: [NameSpecification] = allCases.map { option in
    let elements = option.declaration.spellings.map { spelling -> NameSpecification.Element in
      spelling.hasPrefix("--") ? .customLong(String(spelling.dropFirst(2))) : .customShort(spelling.last!)
    }
    // Literals, not NameSpecification(sequence): its unspecialised generic init costs start-up
    // about 18,000 instructions an option (callgrind).
    return elements.count == 1
      ? [elements[0]] : elements.count == 2 ? [elements[0], elements[1]] : NameSpecification(elements)
  }

  /// What `taskrun --help` says of the option (nothing for a hidden one: an empty text).
  var help: ArgumentHelp {
    let declaration = declaration
    if declaration.text.isEmpty { return .hidden }
    return ArgumentHelp(declaration.text, valueName: declaration.valueName)
  }
}
