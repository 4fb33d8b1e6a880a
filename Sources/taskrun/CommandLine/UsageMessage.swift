// UsageMessage: swift-argument-parser's guess of an option in a usage error, kept only when it is close.
import TaskEngine

/// The library guesses an option for any unknown one with an edit distance under 4
/// (`--bogus`: "Did you mean '--jobs'?"). The guess is kept only when
/// `suggestion(for:among:)`, the rule of unknown targets, finds it close. (Where help is,
/// `taskrun graph --help` and not the library's "See 'graph --help'", is said by
/// `Taskrun.main`.)
enum UsageMessage {
  /// Drops "Did you mean 'X'?" after "Unknown option 'Y'." when X is not close to Y.
  static func withoutDistantGuess(_ text: String) -> String {
    let opening = "Unknown option '", middle = "'. Did you mean '", closing = "'?"
    guard let start = text.firstRange(of: opening), let mid = text[start.upperBound...].firstRange(of: middle),
      let end = text[mid.upperBound...].firstRange(of: closing)
    else { return text }
    let unknown = text[start.upperBound..<mid.lowerBound], guess = text[mid.upperBound..<end.lowerBound]
    func bare(_ s: Substring) -> String { String(s.drop { $0 == "-" }) }
    if !suggestion(for: bare(unknown), among: [bare(guess)]).isEmpty { return text }
    return String(text[..<mid.lowerBound]) + "'" + text[end.upperBound...]
  }
}
