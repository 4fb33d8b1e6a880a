// RunOptions: what `taskrun [OPTIONS] [SCRIPT] [TARGET...]` asks for, and a parse of it without reflection.
import Glibc

/// The run command's options as a plain value. `RunCommand` (swift-argument-parser) makes
/// one; `parse` makes the same one for the common command lines without the reflection that
/// costs a first parse about 3 ms of start-up. Each option is declared in `RunOption`, whose
/// declaration lands its value in one of these fields; their initial values are the defaults.
struct RunOptions: Equatable {
  var jobs: Int?
  var keepGoing = false
  var dryRun = false
  var quiet = false
  var verbose = false
  var progress: ProgressMode = .auto
  /// `--output` (nil: not given; `OutputMode.chosen` decides).
  var output: OutputMode?
  var yes = false
  var noColor = false
  var events: String?
  var trace: String?
  var memory: Int?
  /// `--sandbox` (.commands) or `--sandbox=lua` (.lua); nil: neither.
  var sandbox: SandboxMode?
  /// `--sandbox-allow`: what operations may widen (nil: nothing).
  var sandboxAllow: SandboxAllowance?
  var outputLimit: Int?
  var outputFileLimit: Int?
  var file: String?
  var directory: String?
  var executor: ExecutorChoice?
  var lang: LanguageChoice?
  var answer: String?
  var list = false
  var listNames = false
  /// The run store: `-B`, `--no-store`, `--keep-runs`, `--resume[=RUN]` (0: the last run), `--predict`.
  var always = false
  var noStore = false
  var keepRuns: Int?
  var resume: Int?
  var predict = false
  /// `-w`: cycles of runs on changes, `--debounce` milliseconds apart at least.
  var watch = false
  var debounce: Int?
  var words: [String] = []

  /// Why these options cannot run together, or nil.
  var problem: String? {
    if let jobs, jobs < 1 { return "-j must be at least 1 (got \(jobs))" }
    if quiet && verbose { return "-q and -v cannot be used together" }
    if let problem = output?.conflict(quiet: quiet, verbose: verbose) { return problem }
    if sandboxAllow != nil && sandbox != .commands {
      return sandbox == .lua
        ? "--sandbox-allow needs --sandbox: --sandbox=lua confines no command, so there is nothing to widen"
        : "--sandbox-allow needs --sandbox"
    }
    if sandbox == .commands && executor == .slurm {
      return "--sandbox cannot confine commands run on Slurm: run without --executor slurm, or with --sandbox=lua"
    }
    if let resume, resume < 0 || resume > Int(Int32.max) {
      return "--resume=RUN needs a run id, a whole number from 1 (taskrun history lists them)"
    }
    if let keepRuns, !(1...100_000).contains(keepRuns) {
      return "--keep-runs must be from 1 to 100000 (got \(keepRuns))"
    }
    if noStore && (resume != nil || keepRuns != nil) {
      return "--no-store cannot be used with \(resume != nil ? "--resume" : "--keep-runs"): they need the run store"
    }
    if let debounce, !(0...10_000).contains(debounce) {
      return "--debounce must be from 0 to 10000 milliseconds (got \(debounce))"
    }
    if debounce != nil && !watch { return "--debounce goes with -w" }
    if watch && (dryRun || list || listNames) {
      return "-w cannot be used with \(dryRun ? "-n" : "--list"): it runs the workflow"
    }
    if watch && (noStore || resume != nil) {
      return noStore
        ? "-w needs the run store (it tells what a change made out of date): drop --no-store"
        : "-w cannot be used with --resume: each cycle resumes the one before"
    }
    if predict && !dryRun { return "--predict goes with -n: it predicts a run without running it" }
    if resume != nil && (list || listNames) { return "--resume cannot be used with --list" }
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
    var seen: UInt64 = 0  // a bit per option: a Set or a Dictionary here costs start-up a conformance search
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
      guard let option = RunOption(spelling: name), seen & option.bit == 0 else { return nil }
      seen |= option.bit
      if option.takesValue && value == nil {
        // A value that looks like an option is one to swift-argument-parser: it decides.
        guard i < arguments.count, !arguments[i].hasPrefix("-") || arguments[i] == "-" else { return nil }
        value = arguments[i]
        i += 1
      } else if !option.takesValue && value != nil {
        return nil
      }
      guard option.read(value ?? "", into: &options) else { return nil }
    }
    return options.problem == nil ? options : nil
  }
}
