// ScriptOverwriteCheck: an --events or --trace file that is the script itself is refused before anything is opened.
import Glibc

/// Opening a report file truncates it: `--events build.lua build.lua` would empty the script
/// before it is loaded (and the run, of an empty script, would succeed). A report path is
/// the script when both lead to one file (device and inode, links followed), or, when the
/// report's file does not exist yet, when both resolve to one path (links followed, dangling
/// ones too, and `..`).
enum ScriptOverwriteCheck {
  /// Why `report` (`option`'s value, relative to `folder`, where taskrun started) may not be
  /// written, `script` being the script's path relative to the current folder; nil when it may.
  static func problem(option: String, report: String, script: String, folder: String) -> String? {
    guard report != "-", script != "-" else { return nil }
    let reportPath = report.hasPrefix("/") ? report : folder + "/" + report
    var current = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
    let here = getcwd(&current, current.count).map { String(cString: $0) } ?? "."
    let scriptPath = script.hasPrefix("/") ? script : here + "/" + script
    var a = stat(), b = stat()
    let same = stat(reportPath, &a) == 0
      ? stat(scriptPath, &b) == 0 && a.st_dev == b.st_dev && a.st_ino == b.st_ino
      : resolved(reportPath) == resolved(scriptPath)
    guard same else { return nil }
    return "\(option) '\(report)' is the script '\(script)': writing there would replace it (name another file)"
  }

  /// `path` (absolute) with every link followed, also a dangling one, and `.`/`..` applied:
  /// the file that opening it for writing would create or write.
  static func resolved(_ path: String) -> String {
    var path = path
    for _ in 0..<40 {  // as the kernel's limit on links in a path
      if let real = realpath(path, nil) {
        defer { free(real) }
        return String(cString: real)
      }
      var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
      let count = readlink(path, &buffer, buffer.count - 1)
      let (parent, name) = split(path)
      guard count > 0 else {  // no such file: the folder it would be made in, resolved
        guard let real = realpath(parent, nil) else { return lexical(path) }
        defer { free(real) }
        return lexical(String(cString: real) + "/" + name)
      }
      let target = String(decoding: buffer[..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
      path = target.hasPrefix("/") ? target : parent + "/" + target
    }
    return lexical(path)
  }

  private static func split(_ path: String) -> (parent: String, name: String) {
    guard let slash = path.lastIndex(of: "/") else { return (".", path) }
    let parent = String(path[..<slash])
    return (parent.isEmpty ? "/" : parent, String(path[path.index(after: slash)...]))
  }

  /// The path without `.`, `..` or doubled slashes, as it reads.
  private static func lexical(_ path: String) -> String {
    var parts: [Substring] = []
    for part in path.split(separator: "/") where part != "." {
      if part == ".." { _ = parts.popLast() } else { parts.append(part) }
    }
    return "/" + parts.joined(separator: "/")
  }
}
