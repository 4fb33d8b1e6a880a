// LineReader: where the REPL gets its lines: libedit on a terminal, plain lines from a pipe.
import CEditLine
import FoundationEssentials
import Glibc
import TaskEngine

/// What the user gave at a prompt.
enum Input: Equatable {
  case line(String)
  /// Ctrl-C while typing: the line (and any unfinished statement) is dropped.
  case interrupt
}

/// Reads one line of input after showing `prompt`; nil at the end of input.
protocol LineReader {
  func read(prompt: String) -> Input?
  /// Keeps a complete entry (possibly several lines) in the history.
  func remember(_ entry: String)
  /// What is remembered, oldest first.
  var history: [String] { get }
}

/// Standard input, line by line. Prompts are shown only on a terminal, so piped sessions
/// print nothing but results.
struct PlainLineReader: LineReader {
  let showPrompts = isatty(STDIN_FILENO) != 0

  func read(prompt: String) -> Input? {
    if showPrompts {
      print(prompt, terminator: "")
      fflush(nil)
    }
    return readLine(strippingNewline: true).map(Input.line)
  }

  func remember(_ entry: String) {}
  var history: [String] { [] }
}

/// libedit: line editing, a history kept across sessions, and tab completion.
final class EditLineReader: LineReader {
  /// The reader for a terminal: libedit's, or plain lines where libedit is not installed.
  static func forTerminal(complete: @escaping (String) -> [String]) -> any LineReader {
    ce_load() == 1 ? EditLineReader(complete: complete) : PlainLineReader()
  }

  let historyFile: String
  /// Completions of the word before the cursor (`fetch.res` → `fetch.result`).
  nonisolated(unsafe) static var complete: (String) -> [String] = { _ in [] }
  nonisolated(unsafe) static var matches: [String] = []

  private init(complete: @escaping (String) -> [String]) {
    let state =
      Environment.variable("XDG_STATE_HOME").map { URL(fileURLWithPath: $0) }
      ?? URL(fileURLWithPath: Environment.variable("HOME") ?? FileManager.default.homeDirectoryForCurrentUser.path)
      .appendingPathComponent(".local/state")
    let folder = state.appendingPathComponent("taskrun")
    try? FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    historyFile = folder.appendingPathComponent("history").path
    Self.complete = complete
    setlocale(LC_CTYPE, "")  // libedit edits characters, not bytes, in the user's encoding
    ce_initialize(
      { text, state in  // before reading the history
        if state == 0 { EditLineReader.matches = EditLineReader.complete(text.map { String(cString: $0) } ?? "") }
        guard Int(state) < EditLineReader.matches.count else { return nil }
        return strdup(EditLineReader.matches[Int(state)])
      }, EditLineReader.getc)
    _ = ce_read_history(historyFile)
  }

  func read(prompt: String) -> Input? {
    Self.drain()  // a Ctrl-C during the last evaluation was for the evaluation
    Self.interrupted = false
    guard let line = ce_readline(prompt) else {
      print("")  // Ctrl-D: end the prompt's line
      return nil
    }
    defer { free(line) }
    return Self.interrupted ? .interrupt : .line(String(cString: line))
  }

  // Ctrl-C at the prompt. SIGINT belongs to the signal watcher (so that it can cancel a run),
  // and readline's read() is restarted after it, so the watcher writes to a pipe that
  // `getc` watches beside the terminal. Readline then sees the end of the line (after
  // Ctrl-E and a visible ^C), and `read` reports an interrupt instead of the text.
  private static let wake: (read: Int32, write: Int32) = {
    var fds: [Int32] = [-1, -1]
    guard pipe(&fds) == 0 else { return (-1, -1) }
    for fd in fds {
      _ = fcntl(fd, F_SETFL, O_NONBLOCK)
      _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
    }
    return (fds[0], fds[1])
  }()
  nonisolated(unsafe) private static var interrupted = false
  nonisolated(unsafe) private static var ending = false

  /// Called from the signal watcher's thread: wakes a reading prompt.
  static func interrupt() {
    var byte: UInt8 = 3
    _ = write(wake.write, &byte, 1)
  }

  private static func drain() {
    var bytes = [UInt8](repeating: 0, count: 64)
    while Glibc.read(wake.read, &bytes, bytes.count) > 0 {}
  }

  private static let getc: @convention(c) (UnsafeMutablePointer<FILE>?) -> Int32 = { file in
    if ending {  // the second half of an interrupt: show it, then end the line
      ending = false
      _ = write(STDOUT_FILENO, "^C", 2)
      return 10
    }
    let input = file.map { fileno($0) } ?? STDIN_FILENO
    var fds = [
      pollfd(fd: input, events: Int16(POLLIN), revents: 0),
      pollfd(fd: wake.read, events: Int16(POLLIN), revents: 0)
    ]
    while true {
      if poll(&fds, 2, -1) < 0 {
        if errno == EINTR { continue }
        return EOF
      }
      if fds[1].revents != 0 {
        drain()
        interrupted = true
        ending = true
        return 5  // Ctrl-E: to the end of the line, so the ^C lands after the text
      }
      var first: UInt8 = 0
      let count = Glibc.read(input, &first, 1)
      if count == 1 { return decode(first, input) }
      if count < 0 && (errno == EINTR || errno == EAGAIN) { continue }
      return EOF  // the end of input, or the terminal went away
    }
  }

  private static func readByte(_ fd: Int32) -> UInt8? {
    var byte: UInt8 = 0
    return Glibc.read(fd, &byte, 1) == 1 ? byte : nil
  }

  /// Readline takes whole characters from this hook: one UTF-8 sequence becomes a code point.
  private static func decode(_ first: UInt8, _ fd: Int32) -> Int32 {
    let length = first < 0xC0 ? 1 : first < 0xE0 ? 2 : first < 0xF0 ? 3 : 4
    var bytes = [first]
    while bytes.count < length, let next = readByte(fd) { bytes.append(next) }
    return String(decoding: bytes, as: UTF8.self).unicodeScalars.first.map { Int32($0.value) } ?? Int32(first)
  }

  var history: [String] {
    (0..<ce_history_count()).compactMap { ce_history_entry($0).map { String(cString: $0) } }
  }

  func remember(_ entry: String) {
    guard !entry.trimmed(newlines: false).isEmpty else { return }
    _ = ce_add_history(entry)
    _ = ce_write_history(historyFile)
  }
}
