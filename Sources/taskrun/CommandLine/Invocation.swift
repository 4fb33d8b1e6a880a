// Invocation: the command line as taskrun reads it before either parser (the script's arguments, make's -j4, a forced subcommand).
import Glibc

/// The words of a command line rewritten once, before `RunOptions.parse` or
/// swift-argument-parser sees them: what follows the first `--` is the script's (`arg`),
/// `taskrun -- test …` forces the subcommand, make's `-j4` is `-j 4`, a value below 1 for
/// `-j` is kept a value (to be refused, not read as an option), and `taskrun` alone on a
/// terminal is the REPL.
struct Invocation: Equatable {
  /// The words for the parsers.
  var words: [String]
  /// The words after the first `--`: the script's `arg` table.
  var scriptArguments: [String] = []
  /// The first word is the subcommand whatever the script declares (`taskrun -- test`, and
  /// the REPL of a bare `taskrun` on a terminal).
  var subcommandForced = false

  /// `arguments`: the words after the program's name. `interactive`: standard input is a terminal.
  init(_ arguments: [String], interactive: Bool) {
    var arguments = arguments
    // `taskrun -- test …`: the subcommand, whatever the script declares (CommandChoice).
    if arguments.count > 1 && arguments[0] == "--" && CommandChoice.subcommands.contains(arguments[1]) {
      arguments.removeFirst()
      subcommandForced = true
    }
    // Everything after the first `--` belongs to the script (`arg`), not to taskrun.
    if let separator = arguments.firstIndex(of: "--") {
      scriptArguments = Array(arguments[(separator + 1)...])
      arguments = Array(arguments[..<separator])
    }
    // make's spelling `-j4` means `-j 4`; `-j -1` is a value to refuse, not an option.
    arguments = arguments.flatMap { argument -> [String] in
      argument.hasPrefix("-j") && argument.count > 2 && Int(argument.dropFirst(2)) != nil
        ? ["-j", String(argument.dropFirst(2))] : [argument]
    }
    for i in arguments.indices.dropLast().reversed()
    where ["-j", "--jobs"].contains(arguments[i]) && Int(arguments[i + 1]).map({ $0 < 1 }) == true {
      arguments[i...i + 1] = ["--jobs=\(arguments[i + 1])"]
    }
    if arguments.isEmpty && interactive {  // `taskrun` on a terminal: the REPL
      arguments = ["repl"]
      subcommandForced = true
    }
    words = arguments
  }
}

/// A command of taskrun (`run`, `repl`, `test`, `graph`), run with the invocation it was
/// parsed from and the choice that may hold a load of the found script.
protocol InvokedCommand {
  func run(_ invocation: Invocation, choice: CommandChoice) throws
}
