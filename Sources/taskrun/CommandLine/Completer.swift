// Completer: what a shell completes after `taskrun WORDS… CURRENT` (`taskrun --complete -- WORDS… CURRENT`), for the scripts in CompletionScripts.swift.
import FoundationEssentials
import Glibc
import LuaHost
import TaskEngine

/// Decides completions in one place for bash, zsh and fish: the shells' scripts only ask
/// `taskrun --complete -- WORD… CURRENT` and add files where told. The answer's first line
/// is the files the shell adds (`none`, `files`, `dirs` or `lua`: .lua files and folders),
/// then one candidate per line that starts with CURRENT. Subcommands follow the rule of a
/// run (`CommandChoice`): `test` is the subcommand unless the found script declares it.
enum Completer {
  /// What the shell adds besides the candidates.
  enum Files: String { case none, files, dirs, lua }

  /// Options of one command: those that take a value, by what the value is, and flags.
  struct Options {
    var flags: [String]
    var files: [String] = []
    var dirs: [String] = []
    var words: [(options: [String], values: [String])] = []
    var other: [String] = []  // values with nothing to complete (a number, a pattern)
    /// Hidden options that take a value (`--resume-run`, the spelling `--resume=RUN` becomes):
    /// never offered, but their value is not a script or a target.
    var hidden: [String] = []

    var all: [String] { flags + files + dirs + words.flatMap(\.options) + other }
  }

  /// The run command's options, from their declarations (`RunOption`, declared in this
  /// order), then those swift-argument-parser adds.
  static let run: Options = {
    var options = Options(flags: [])
    for option in RunOption.allCases {
      let spellings = option.declaration.spellings
      if option.declaration.text.isEmpty {  // a hidden one is not offered
        if option.takesValue { options.hidden += spellings }
        continue
      }
      switch option.declaration.value {
      case .flag: options.flags += spellings
      case .file: options.files += spellings
      case .folder: options.dirs += spellings
      case .choice(let type, _): options.words.append((spellings, type.words))
      case .number, .word: options.other += spellings
      }
    }
    options.flags += ["--version", "-h", "--help"]
    options.words.append((["--generate-completion-script"], ["bash", "zsh", "fish"]))
    return options
  }()

  static let test = Options(
    flags: [
      "-l", "--list", "--auto-insulate", "--no-auto-insulate", "--suppress-pending", "--no-suppress-pending", "-c",
      "--coverage", "--no-coverage", "--shuffle", "--no-shuffle", "--shuffle-files", "--no-shuffle-files",
      "--shuffle-tests", "--no-shuffle-tests", "--sort", "--no-sort", "--sort-files", "--no-sort-files", "--sort-tests",
      "--no-sort-tests", "-k", "--keep-going", "--no-keep-going", "-R", "--recursive", "--no-recursive", "--lazy",
      "--no-lazy", "--defer-print", "--no-defer-print", "-s", "--enable-sound", "--no-enable-sound", "--ignore-lua",
      "--tap", "-v", "--verbose", "--no-verbose", "--no-color", "--version", "-h", "--help"
    ],
    files: [
      "-f", "--config-file", "--helper", "--junit", "--events", "--coverage-config-file", "--exclude-names-file",
      "--log-success", "--lua"
    ],
    dirs: ["-C", "--directory"],
    words: [
      (["-o", "--output"], ["utfTerminal", "plainTerminal", "TAP", "json", "junit", "gtest", "sound"]),
      (["--loaders"], ["lua", "moonscript", "terra"]),
      (["--lang"], ["ar", "de", "en", "es", "fr", "is", "it", "ja", "nl", "pt-BR", "ro", "ru", "th", "ua", "zh"])
    ],
    other: [
      "-p", "--pattern", "--exclude-pattern", "-r", "--run", "-Xoutput", "-Xhelper", "-m", "--lpath",
      "--cpath", "-e", "--repeat", "--filter", "--filter-out", "-t", "--tags", "--exclude-tags", "--seed", "--name",
      "-j", "--jobs", "--timeout"
    ])

  static let graph = Options(
    flags: ["--sandbox", "--version", "-h", "--help"], files: ["-f"], dirs: ["-C"],
    words: [
      (["--format"], GraphFormat.allCases.map(\.rawValue)),
      (["--sandbox-allow"], SandboxAllowance.allCases.map(\.rawValue))
    ])

  static let repl = Options(
    flags: ["--yes", "--sandbox", "--version", "-h", "--help"], files: ["-f"], dirs: ["-C"],
    words: [(["--sandbox-allow"], SandboxAllowance.allCases.map(\.rawValue))], other: ["-j", "--jobs"])

  static let runs = Options(
    flags: ["--json", "--version", "-h", "--help"], files: ["-f"], dirs: ["-C"], other: ["--limit"])

  static let report = Options(flags: ["--version", "-h", "--help"], files: ["-f", "-o", "--output"], dirs: ["-C"])

  /// The answer for `words` (after the program's name; the last is the word being completed).
  static func answer(_ words: [String]) -> String {
    let loads = CommandChoice(scriptArguments: [])  // a completion's loads: each script once
    let current = words.last ?? ""
    var before = Array(words.dropLast())
    var subcommand: String?
    if let first = before.first, first == "--" || CommandChoice.subcommands.contains(first) {
      if first == "--" {
        guard before.count > 1 else { return reply(.none, CommandChoice.subcommands, current) }
        before.removeFirst()
        subcommand = before.first
      } else {
        subcommand = isTarget(first, loads) ? nil : first
      }
      if subcommand != nil { before.removeFirst() }
    }
    let options =
      switch subcommand {
      case "test": test
      case "graph": graph
      case "repl": repl
      case "runs": runs
      case "report": report
      case "help": Options(flags: [])
      default: run
      }
    // After `--` (a run's or graph's script arguments): anything, files most likely.
    if subcommand != "test", before.contains("--") { return reply(.files, [], current) }
    if let previous = before.last, previous.hasPrefix("-") {
      if options.files.contains(previous) { return reply(.files, [], current) }
      if options.dirs.contains(previous) { return reply(.dirs, [], current) }
      if let choice = options.words.first(where: { $0.options.contains(previous) }) {
        return reply(.none, choice.values, current)
      }
      if options.other.contains(previous) || options.hidden.contains(previous) { return reply(.none, [], current) }
    }
    if current.hasPrefix("-") { return reply(.none, options.all, current) }
    let positional = positionals(before, options)
    switch subcommand {
    case "test": return reply(.files, [], current)
    case "repl": return reply(positional.isEmpty ? .lua : .none, [], current)
    case "status", "watch", "cancel", "pause", "resume", "why", "history": return reply(.none, [], current)
    case "runs":  // a script first, then show or diff
      let words = positional.first.map(ScriptFinder.isScript) == true ? Array(positional.dropFirst()) : positional
      return reply(positional.isEmpty ? .lua : .none, words.isEmpty ? ["show", "diff"] : ["last"], current)
    case "report": return reply(positional.isEmpty ? .lua : .none, ["last"], current)
    case "help": return reply(.none, positional.isEmpty ? Array(CommandChoice.subcommands.dropLast()) : [], current)
    default:
      let targets = self.targets(before, positional, options, loads)
      let first = positional.isEmpty
      return reply(
        first ? .lua : .none, (first && subcommand == nil ? CommandChoice.subcommands : []) + targets, current)
    }
  }

  /// The words that are not options or their values.
  static func positionals(_ words: [String], _ options: Options) -> [String] {
    var found: [String] = [], i = 0
    let takesValue = Set(
      options.files + options.dirs + options.words.flatMap(\.options) + options.other + options.hidden)
    while i < words.count {
      if takesValue.contains(words[i]) { i += 2; continue }
      if !words[i].hasPrefix("-") || words[i] == "-" { found.append(words[i]) }
      i += 1
    }
    return found
  }

  /// The top-level operations of the script the words name (`-f`, `-C`, a first word that is
  /// a script) or taskrun finds, loaded as `--list` loads it; none when it does not load.
  static func targets(
    _ words: [String], _ positional: [String], _ options: Options,
    _ loads: CommandChoice
  ) -> [String] {
    func value(_ option: String) -> String? {
      words.firstIndex(of: option).flatMap { $0 + 1 < words.count ? words[$0 + 1] : nil }
    }
    if let directory = value("-C"), !FileManager.default.changeCurrentDirectoryPath(directory) { return [] }
    var script = value("-f")
    if script == nil, let first = positional.first, ScriptFinder.isScript(first), first != "-" { script = first }
    if script == nil, let (folder, name) = ScriptFinder.discover() {
      _ = FileManager.default.changeCurrentDirectoryPath(folder)
      script = name
    }
    guard let script, let seconds = secondsLeft() else { return [] }
    return (try? loads.declaredOperations(of: script, within: seconds, stuck: giveUp)) ?? []
  }

  /// Seconds one completion may spend loading scripts, all loads together: a top level that
  /// loops or waits (a read of a FIFO) must not hold the shell. Past them: no targets.
  static let loadSeconds = 2.0
  private static let started = ContinuousClock.now

  /// What is left of `loadSeconds` (nil: nothing, load no more).
  static func secondsLeft() -> Double? {
    let spent = ContinuousClock.now - started
    let left = loadSeconds - Double(spent.components.seconds) - Double(spent.components.attoseconds) * 1e-18
    return left > 0.01 ? left : nil
  }

  /// Whether a subcommand's name is a target of the found script, within the time left.
  static func isTarget(_ word: String, _ loads: CommandChoice) -> Bool {
    guard let seconds = secondsLeft(), ScriptFinder.discover() != nil else { return false }
    return (try? loads.isTarget(word, within: seconds, stuck: giveUp)) == true
  }

  /// When Lua cannot be stopped (a finalizer that loops): no completions, and the end.
  @Sendable static func giveUp() {
    _ = write(STDOUT_FILENO, "none\n", 5)
    _exit(0)
  }

  static func reply(_ files: Files, _ candidates: [String], _ current: String) -> String {
    var seen: Set<String> = []  // `test`, a subcommand and a target, is offered once
    let offered = candidates.filter { $0.hasPrefix(current) && !$0.contains("\n") && seen.insert($0).inserted }
    return ([files.rawValue] + offered).map { $0 + "\n" }.joined()
  }
}
