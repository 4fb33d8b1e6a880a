// Invocation: the command line as taskrun reads it before either parser (the script's arguments, make's -j4, a subcommand after options).
import Glibc

/// The words of a command line rewritten once, before `RunOptions.parse` or
/// swift-argument-parser sees them: what follows the first `--` is the script's (`arg`),
/// `taskrun [OPTIONS] -- test …` forces the subcommand, make's `-j4` and `-kj4` are
/// `-j 4` and `-k -j 4`, a negative number after an option that takes one is kept a value
/// (to be refused, not read as an option), and `taskrun` alone on a terminal is the REPL
/// where no script is found.
///
/// The rule of a subcommand: the first word that is not one of the run's options (nor an
/// option's value) names it: `taskrun -C w1 graph` as `taskrun graph`, and `taskrun -C w1
/// -- graph` as `taskrun -- graph`. The options before it are the subcommand's when it takes
/// them (`subcommandWords`: `-C DIR` and `-f FILE` for graph and repl, `-j`, `--yes` for
/// repl, `-C`, `-j`, `-v`, `-l`, `--no-color`, `--events` for test); any other is a usage
/// error that names it.
struct Invocation: Equatable {
  /// The words for the parsers, in the order given (a run's).
  var words: [String]
  /// The words after the first `--`: the script's `arg` table.
  var scriptArguments: [String] = []
  /// The subcommand is the subcommand whatever the script declares (`taskrun -- test`, and
  /// the REPL of a bare `taskrun` on a terminal where no script is found).
  var subcommandForced = false
  /// Where in `words` the subcommand's name is (after the run's options), if the first word
  /// that is not an option names one.
  var subcommandIndex: Int?

  /// `arguments`: the words after the program's name. `interactive`: standard input is a
  /// terminal. `scriptFound`: whether taskrun finds a script here or above (asked only for
  /// a bare command line on a terminal).
  init(
    _ arguments: [String], interactive: Bool,
    scriptFound: () -> Bool = { ScriptFinder.discover() != nil }
  ) {
    var arguments = arguments
    // `taskrun [OPTIONS] -- test …`: the subcommand, whatever the script declares (CommandChoice).
    if let separator = arguments.firstIndex(of: "--"), separator + 1 < arguments.count,
      CommandChoice.subcommands.contains(arguments[separator + 1]),
      Self.optionsEnd(arguments[..<separator]) == separator
    {
      arguments.remove(at: separator)
      subcommandForced = true
    }
    // Everything after the first `--` belongs to the script (`arg`), not to taskrun.
    if let separator = arguments.firstIndex(of: "--") {
      scriptArguments = Array(arguments[(separator + 1)...])
      arguments = Array(arguments[..<separator])
    }
    arguments = arguments.flatMap(Self.splitJobs)
    // `--sandbox=lua`: a flag's spelling of its own, for both parsers.
    arguments = arguments.flatMap { word -> [String] in
      if word == "--sandbox=lua" { return ["--sandbox-lua"] }
      // `--resume=RUN`: the run, as the value of a hidden option of its own.
      if word.hasPrefix("--resume=") { return ["--resume-run", String(word.dropFirst("--resume=".count))] }
      return [word]
    }
    // `-j -1`, `--output-limit -1`: a number to refuse with its range, not an option.
    for i in arguments.indices.dropLast().reversed() {
      // The option is looked up last: a lookup makes the declarations (start-up time).
      guard arguments[i + 1].hasPrefix("-"), Int(arguments[i + 1]) != nil,
        let option = RunOption(spelling: arguments[i]),
        case .number = option.declaration.value
      else { continue }
      arguments[i...i + 1] = ["\(option.declaration.long ?? arguments[i])=\(arguments[i + 1])"]
    }
    let end = Self.optionsEnd(arguments[...])
    if end < arguments.count && CommandChoice.subcommands.contains(arguments[end]) {
      subcommandIndex = end
    }
    if arguments.isEmpty && interactive && !scriptFound() {  // `taskrun` on a terminal, no script: the REPL
      arguments = ["repl"]
      subcommandForced = true
      subcommandIndex = 0
    }
    words = arguments
  }

  /// The subcommand's name, if the command line names one after the run's options.
  var subcommand: String? { subcommandIndex.map { words[$0] } }

  /// The words for the subcommand's parser: its name, then the options given before it,
  /// then the rest. An option before it that the subcommand does not take is a usage error.
  func subcommandWords() throws -> [String] {
    guard let index = subcommandIndex else { return words }
    let name = words[index], before = words[..<index]
    let takes = Self.optionsTaken[name] ?? []
    for word in before where word.hasPrefix("-") {
      let spelling = word.hasPrefix("--") ? String(word.prefix { $0 != "=" }) : word
      guard let option = RunOption(spelling: spelling), !takes.contains(option) else { continue }
      throw OptionNotTaken(subcommand: name, option: spelling)
    }
    return [name] + before + words[(index + 1)...]
  }

  /// The run's options a subcommand also takes (with the same meaning), given before its name.
  static let optionsTaken: [String: [RunOption]] = [
    "graph": [.file, .directory, .sandbox, .sandboxLua, .sandboxAllow],
    "repl": [.file, .directory, .jobs, .yes, .sandbox, .sandboxLua, .sandboxAllow],
    "test": [.directory, .jobs, .verbose, .list, .noColor, .events],
    "why": [.file, .directory], "history": [.file, .directory], "runs": [.file, .directory],
    "report": [.file, .directory],
    "status": [], "watch": [], "cancel": [], "pause": [], "resume": [],
    "help": []
  ]

  /// An option given before a subcommand that does not take it.
  struct OptionNotTaken: Error, Equatable {
    let subcommand: String
    let option: String
    var description: String {
      let taken = (Invocation.optionsTaken[subcommand] ?? []).flatMap(\.declaration.spellings)
      return "'taskrun \(subcommand)' does not take \(option)"
        + (taken.isEmpty ? "" : " (of the options before it, it takes \(taken.joined(separator: ", ")))")
    }
  }

  /// `-C DIR` and `-f FILE` given before the subcommand (the last of each): the folder and
  /// the script whose targets decide whether its name is a target (`CommandChoice`).
  var leadingPlace: (directory: String?, file: String?) {
    guard let index = subcommandIndex else { return (nil, nil) }
    var directory: String?, file: String?
    var i = 0
    while i < index {
      let option = RunOption(spelling: words[i])
      if option?.takesValue == true && i + 1 < index {
        if option == .directory { directory = words[i + 1] }
        if option == .file { file = words[i + 1] }
        i += 2
      } else {
        i += 1
      }
    }
    return (directory, file)
  }

  /// Where the run's options at the start of `words` end: the index of the first word that
  /// is neither an option nor an option's value (`-C w1`, `--events f`, `-j 4`); past
  /// `endIndex` where the last option's value is missing.
  static func optionsEnd(_ words: ArraySlice<String>) -> Int {
    var i = words.startIndex
    while i < words.endIndex {
      let word = words[i]
      guard word.hasPrefix("-"), word != "-", word != "--" else { return i }
      if let option = RunOption(spelling: word), option.takesValue { i += 2 } else { i += 1 }
    }
    return i  // past the end where the last option lacks its value
  }

  /// make's spellings: `-j4` is `-j 4`, `-kj4` (flags, then `j` and its value) is `-k -j 4`;
  /// `-jx` is `-j x` (a value to refuse as such). A value starting with `-` stays one
  /// word with its option (`--jobs=-1`).
  static func splitJobs(_ word: String) -> [String] {
    guard word.hasPrefix("-"), !word.hasPrefix("--"), let j = word.firstIndex(of: "j") else { return [word] }
    let flags = word[word.index(after: word.startIndex)..<j], value = String(word[word.index(after: j)...])
    guard flags.allSatisfy({ RunOption(spelling: "-\($0)").map { !$0.takesValue } ?? false }) else { return [word] }
    let split = flags.map { "-\($0)" }
    if value.isEmpty { return split + ["-j"] }
    return split + (value.hasPrefix("-") ? ["--jobs=\(value)"] : ["-j", value])
  }
}

/// A command of taskrun (`run`, `repl`, `test`, `graph`), run with the invocation it was
/// parsed from and the choice that may hold a load of the found script.
protocol InvokedCommand {
  func run(_ invocation: Invocation, choice: CommandChoice) throws
}
