// ScriptOverwriteCheck: an --events or --trace file that is the script itself is refused before anything is opened.
import Glibc

/// Opening a report file truncates it: `--events build.lua build.lua` would empty the script
/// before it is loaded (and the run, of an empty script, would succeed). A report path is
/// the script when both lead to one file as `ReportFile.sameFile` decides it (links
/// followed, dangling ones too, `..`, or one device and inode).
enum ScriptOverwriteCheck {
  /// Why `report` (`option`'s value, relative to `folder`, where taskrun started) may not be
  /// written, `script` being the script's path relative to the current folder; nil when it may.
  static func problem(option: String, report: String, script: String, folder: String) -> String? {
    guard report != "-", script != "-" else { return nil }
    let reportPath = report.hasPrefix("/") ? report : folder + "/" + report
    var current = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
    let here = getcwd(&current, current.count).map { String(cString: $0) } ?? "."
    let scriptPath = script.hasPrefix("/") ? script : here + "/" + script
    guard ReportFile.sameFile(reportPath, scriptPath) else { return nil }
    return "\(option) '\(report)' is the script '\(script)': writing there would replace it (name another file)"
  }
}
