// LineReader: where the REPL gets its lines: a plain reader for pipes (and terminals for now).
import Foundation

/// Reads one line of input after showing `prompt`; nil at the end of input.
protocol LineReader {
  func read(prompt: String) -> String?
  /// Keeps a complete entry (possibly several lines) in the history.
  func remember(_ entry: String)
}

/// Standard input, line by line. Prompts are shown only on a terminal, so piped sessions
/// print nothing but results.
struct PlainLineReader: LineReader {
  let showPrompts = isatty(STDIN_FILENO) != 0

  func read(prompt: String) -> String? {
    if showPrompts {
      print(prompt, terminator: "")
      fflush(nil)
    }
    return readLine(strippingNewline: true)
  }

  func remember(_ entry: String) {}
}
