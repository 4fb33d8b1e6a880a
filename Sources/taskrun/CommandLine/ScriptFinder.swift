// ScriptFinder: which script a command line means (as make, just and go-task find theirs),
// and `--list`, its operations with their descriptions.
import FoundationEssentials
import Glibc
import LuaHost
import TaskEngine

/// What a script prints while it is only read (`--list`, `graph`), on standard error: standard
/// output is the listing or the picture.
final class MessagesToStandardError: EventSink {
  func receive(_ event: RunEvent) {
    guard case .message(_, _, let text, _) = event else { return }
    writeStandardError(text + "\n")
  }
}

enum ScriptFinder {
  /// The names looked for, in this order, in the current folder and then its parents.
  static let defaultNames = ["taskrun.lua", "workflow.lua"]

  /// The script and the targets: `-f FILE`; else a first word that is a script (`isScript`);
  /// else taskrun.lua or workflow.lua here or in the nearest parent that has one, whose
  /// folder becomes the working directory (as just and go-task run theirs). `-C DIR`
  /// changes folder first.
  static func resolve(file: String?, directory: String?, words: [String]) throws -> (String, [String]) {
    let manager = FileManager.default
    if let directory, !manager.changeCurrentDirectoryPath(directory) {
      throw HostError("-C \(directory): cannot change to that folder")
    }
    if let file { return (file, words) }
    if let first = words.first, isScript(first) {
      return (first, Array(words.dropFirst()))
    }
    if let (folder, name) = discover() {
      if folder != manager.currentDirectoryPath { _ = manager.changeCurrentDirectoryPath(folder) }
      return (name, words)
    }
    var info = stat()
    if let first = words.first, stat(first, &info) == 0 {  // `taskrun ./configure`: a file, but not a script
      throw HostError(
        info.st_mode & S_IFMT == S_IFDIR
          ? "'\(first)': it is a directory, not a script (-C DIR runs the script of a folder)"
          : "'\(first)' is not a taskrun script: a script's name ends in .lua or its first "
            + "line is #!…taskrun (-f FILE loads any file as the script)")
    }
    throw HostError(
      "no script given, and no \(defaultNames.joined(separator: " or ")) here or in a parent folder "
        + "(taskrun SCRIPT [TARGET...], or -f FILE)")
  }

  /// Whether a first word is the script rather than a target: `-` (standard input), a name
  /// ending in `.lua` (an error if it cannot be read), or a file whose first line is a
  /// `#!` line naming taskrun (an executable script run through its shebang). Any other
  /// file (`configure`, a `link` made by a build) is not loaded as Lua: its name is a target.
  static func isScript(_ word: String) -> Bool {
    word == "-" || word.hasSuffix(".lua") || startsWithTaskrunShebang(word)
  }

  /// A regular file (never a FIFO or a device, whose read could block) whose first line
  /// starts with `#!` and names taskrun.
  static func startsWithTaskrunShebang(_ path: String) -> Bool {
    var info = stat()
    guard stat(path, &info) == 0, info.st_mode & S_IFMT == S_IFREG else { return false }
    let fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)
    guard fd >= 0 else { return false }
    defer { close(fd) }
    var head = [UInt8](repeating: 0, count: 256)
    let count = read(fd, &head, head.count)
    guard count > 2, head[0] == UInt8(ascii: "#"), head[1] == UInt8(ascii: "!") else { return false }
    let line = head[..<count].prefix { $0 != 10 }
    return String(decoding: line, as: UTF8.self).contains("taskrun")
  }

  /// The folder and name of the script taskrun finds without being told: taskrun.lua or
  /// workflow.lua in the current folder or the nearest parent that has one. Nil for none.
  static func discover() -> (folder: String, name: String)? {
    var folder = URL(fileURLWithPath: FileManager.default.currentDirectoryPath).standardizedFileURL
    while true {
      for name in defaultNames where isFile(folder.appendingPathComponent(name).path) {
        return (folder.path, name)
      }
      let parent = folder.deletingLastPathComponent()
      if parent.path == folder.path { return nil }
      folder = parent
    }
  }

  private static func isFile(_ path: String) -> Bool {
    var info = stat()
    return stat(path, &info) == 0 && info.st_mode & S_IFMT != S_IFDIR
  }

  /// `--list`: the operations declared at the top level (not inside a group), each with its
  /// `desc`, aligned, as `task --list` and `just --list` print theirs; `namesOnly` (for shell
  /// completion): one name per line.
  static func listing(_ ops: [OperationNode], of script: String, namesOnly: Bool) -> String {
    let shown = ops.filter { $0.group == nil }
    if namesOnly { return shown.map { $0.name + "\n" }.joined() }
    guard !shown.isEmpty else { return "\(script) declares no operations\n" }
    let width = min(32, shown.map(\.name.columns).max() ?? 0)
    var text = "Operations in \(script):\n"
    for op in shown {
      let padding = String(repeating: " ", count: max(0, width - op.name.columns))
      let grant = op.body?.sandbox.flatMap {
        $0.isEmpty ? nil : "[sandbox: \(TerminalText.escaped($0.summary, keepingLines: false))]"
      }
      let notes = [op.desc, grant].compactMap { $0 }.joined(separator: "  ")
      text += "  \(op.name)" + (notes.isEmpty ? "" : "\(padding)  \(notes)") + "\n"
    }
    return text
  }
}
