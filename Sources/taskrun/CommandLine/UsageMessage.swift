// UsageMessage: swift-argument-parser's usage errors in taskrun's words, its guess of an option kept only when it is close.
import TaskEngine

/// The library guesses an option for any unknown one with an edit distance under 4
/// (`--bogus`: "Did you mean '--jobs'?"). The guess is kept only when
/// `suggestion(for:among:)`, the rule of unknown targets, finds it close. (Where help is,
/// `taskrun graph --help` and not the library's "See 'graph --help'", is said by
/// `Taskrun.main`.)
enum UsageMessage {
  /// swift-argument-parser's message as taskrun's own: each line lower case at its start
  /// ("unknown option '-x'", "missing value for '-j <jobs>'"), its second sentence after a
  /// semicolon ("…; did you mean '--jobs'?"), no "Error:" and no closing full stop, the
  /// distant guess dropped.
  static func inTaskrunsWords(_ text: String) -> [String] {
    withoutDistantGuess(text).split(separator: "\n").compactMap { line -> String? in
      var line = String(line)
      for prefix in ["Error: ", "or: "] where line.hasPrefix(prefix) { line.removeFirst(prefix.count) }
      for sentence in [". Did you mean", ". Please provide"] {
        line = line.replacing(sentence, with: "; " + sentence.dropFirst(2).lowercased())
      }
      line = lowerFirst(line)
      if line.hasSuffix(".") { line.removeLast() }
      // `--sandbox=X`: the one value it takes is `lua` (Invocation spells that as a flag).
      let sandbox = "the option '--sandbox' does not take any value, but "
      if line.hasPrefix(sandbox) {
        line = "--sandbox takes no value but lua (--sandbox=lua), and " + line.dropFirst(sandbox.count)
      }
      return line.isEmpty ? nil : line
    }
  }

  /// The first letter lower case where it starts a word ("Unknown" but not "TAP" or "Lua").
  private static func lowerFirst(_ line: String) -> String {
    let letters = Array(line.prefix(2))
    guard letters.count == 2, letters[0].isUppercase, letters[1].isLowercase else { return line }
    return letters[0].lowercased() + line.dropFirst()
  }

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
