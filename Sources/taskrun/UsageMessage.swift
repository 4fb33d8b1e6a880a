// UsageMessage: swift-argument-parser's usage errors in taskrun's words: the whole command to ask for help, and a guess only when it is close.
import TaskEngine

/// A subcommand is parsed as a root of its own (see `Taskrun.main`), so the library names
/// it alone ("See 'graph --help'"), which is no command a user can type; and it guesses an
/// option for any unknown one with an edit distance under 4 (`--bogus`: "Did you mean
/// '--jobs'?"). The guess is kept only when `suggestion(for:among:)`, the rule of unknown
/// targets, finds it close.
enum UsageMessage {
  static func adjusted(_ message: String, subcommand: String?) -> String {
    var text = message
    if let subcommand {
      text = text.replacing("See '\(subcommand) ", with: "See 'taskrun \(subcommand) ")
    }
    return withoutDistantGuess(text)
  }

  /// Drops "Did you mean 'X'?" after "Unknown option 'Y'." when X is not close to Y.
  static func withoutDistantGuess(_ text: String) -> String {
    let opening = "Unknown option '", middle = "'. Did you mean '", closing = "'?"
    guard let start = text.firstRange(of: opening), let mid = text[start.upperBound...].firstRange(of: middle),
          let end = text[mid.upperBound...].firstRange(of: closing) else { return text }
    let unknown = text[start.upperBound..<mid.lowerBound], guess = text[mid.upperBound..<end.lowerBound]
    func bare(_ s: Substring) -> String { String(s.drop { $0 == "-" }) }
    if !suggestion(for: bare(unknown), among: [bare(guess)]).isEmpty { return text }
    return String(text[..<mid.lowerBound]) + "'" + text[end.upperBound...]
  }
}
