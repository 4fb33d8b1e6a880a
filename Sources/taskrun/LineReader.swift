// LineReader: where the REPL gets its lines: a plain reader for pipes (and terminals for now).
import CEditLine
import Foundation

/// Reads one line of input after showing `prompt`; nil at the end of input.
protocol LineReader {
  func read(prompt: String) -> String?
  /// Keeps a complete entry (possibly several lines) in the history.
  func remember(_ entry: String)
  /// What is remembered, oldest first.
  var history: [String] { get }
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
  var history: [String] { [] }
}

/// libedit: line editing, a history kept across sessions, and tab completion.
final class EditLineReader: LineReader {
  let historyFile: String
  /// Completions of the word before the cursor (`fetch.res` → `fetch.result`).
  nonisolated(unsafe) static var complete: (String) -> [String] = { _ in [] }
  nonisolated(unsafe) static var matches: [String] = []

  init(complete: @escaping (String) -> [String]) {
    let environment = ProcessInfo.processInfo.environment
    let state = environment["XDG_STATE_HOME"].map { URL(fileURLWithPath: $0) }
      ?? URL(fileURLWithPath: NSHomeDirectory()).appendingPathComponent(".local/state")
    let folder = state.appendingPathComponent("taskrun")
    try? FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    historyFile = folder.appendingPathComponent("history").path
    Self.complete = complete
    ce_set_completer { text, state in  // initializes libedit, so before reading the history
      if state == 0 { EditLineReader.matches = EditLineReader.complete(text.map { String(cString: $0) } ?? "") }
      guard Int(state) < EditLineReader.matches.count else { return nil }
      return strdup(EditLineReader.matches[Int(state)])
    }
    _ = read_history(historyFile)
  }

  func read(prompt: String) -> String? {
    guard let line = readline(prompt) else {
      print("")  // Ctrl-D: end the prompt's line
      return nil
    }
    defer { free(line) }
    return String(cString: line)
  }

  var history: [String] {
    (0..<ce_history_count()).compactMap { ce_history_entry($0).map { String(cString: $0) } }
  }

  func remember(_ entry: String) {
    guard !entry.trimmingCharacters(in: .whitespaces).isEmpty else { return }
    _ = add_history(entry)
    _ = write_history(historyFile)
  }
}
