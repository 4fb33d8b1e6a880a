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
    guard case .message(_, _, let text) = event else { return }
    writeStandardError(text + "\n")
  }
}

enum ScriptFinder {
  /// The names looked for, in this order, in the current folder and then its parents.
  static let defaultNames = ["taskrun.lua", "workflow.lua"]

  /// The script and the targets: `-f FILE`; else a first word that is a .lua file, "-", a
  /// path (it has a "/") or an existing file; else taskrun.lua or workflow.lua here or in the nearest parent that has
  /// one, whose folder becomes the working directory (as just and go-task run theirs).
  /// `-C DIR` changes folder first.
  static func resolve(file: String?, directory: String?, words: [String]) throws -> (String, [String]) {
    let manager = FileManager.default
    if let directory, !manager.changeCurrentDirectoryPath(directory) {
      throw HostError("-C \(directory): cannot change to that folder")
    }
    if let file { return (file, words) }
    if let first = words.first, first == "-" || first.hasSuffix(".lua") || first.contains("/") || isFile(first) {
      return (first, Array(words.dropFirst()))
    }
    var folder = URL(fileURLWithPath: manager.currentDirectoryPath).standardizedFileURL
    while true {
      for name in defaultNames where isFile(folder.appendingPathComponent(name).path) {
        if folder.path != manager.currentDirectoryPath { _ = manager.changeCurrentDirectoryPath(folder.path) }
        return (name, words)
      }
      let parent = folder.deletingLastPathComponent()
      if parent.path == folder.path { break }
      folder = parent
    }
    throw HostError("no script given, and no \(defaultNames.joined(separator: " or ")) here or in a parent folder "
      + "(taskrun SCRIPT [TARGET...], or -f FILE)")
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
      text += "  \(op.name)" + (op.desc.map { "\(padding)  \($0)" } ?? "") + "\n"
    }
    return text
  }
}
