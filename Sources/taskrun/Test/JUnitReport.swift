// JUnitReport: `taskrun test --junit FILE`: JUnit XML as CI systems read it (flat
// testsuite/testcase, `time` on every element, failures with their messages).
import FoundationEssentials
import LuaHost
import TaskEngine

final class JUnitReport: TestReport {
  let path: String
  /// The file, opened in place at the start (nil: standard output): a link, a device or a
  /// FIFO is written, never replaced by a renamed file, and a FIFO without a reader is
  /// refused at once rather than waited for (ReportFile).
  private let file: ReportFile?
  private(set) var writeError: String?

  init(path: String, file: ReportFile? = nil) {
    self.path = path
    self.file = file
  }

  /// A report to `path` ("-": standard output); a file that cannot be written is refused
  /// before anything runs.
  static func open(path: String) throws -> JUnitReport {
    guard path != "-" else { return JUnitReport(path: path) }
    do {
      return JUnitReport(path: path, file: try ReportFile(path: path, what: "the JUnit report"))
    } catch {
      throw HostError("\(error)")
    }
  }

  func ended(_ results: [TestResult], notRun: NotRun, elapsed: Double) {
    let text = xml(results, elapsed: elapsed)
    guard let file else { return print(text, terminator: "") }
    file.replace(with: text)
    file.close()
    // ReportFile said why on standard error.
    if file.hasFailed { writeError = "cannot write the JUnit report to '\(path)'" }
  }

  func xml(_ results: [TestResult], elapsed: Double) -> String {
    var files: [String] = []
    var byFile: [String: [TestResult]] = [:]
    for result in results {
      if byFile[result.test.file] == nil { files.append(result.test.file) }
      byFile[result.test.file, default: []].append(result)
    }
    func counts(_ list: [TestResult]) -> String {
      let failures = list.filter { $0.status == .failure }.count
      let errors = list.filter { $0.status == .error }.count
      let skipped = list.filter { $0.status == .pending }.count
      return #"tests="\#(list.count)" failures="\#(failures)" errors="\#(errors)" skipped="\#(skipped)""#
    }
    let timestamp = Date().formatted(.iso8601)
    var lines = [
      #"<?xml version="1.0" encoding="UTF-8"?>"#,
      #"<testsuites name="taskrun test" \#(counts(results)) time="\#(seconds(elapsed))">"#
    ]
    for file in files {
      let list = byFile[file]!
      let time = list.reduce(0) { $0 + $1.duration }
      lines.append(
        #"  <testsuite name="\#(escape(file))" \#(counts(list)) time="\#(seconds(time))" timestamp="\#(timestamp)">"#)
      for result in list {
        let test = result.test
        let open =
          #"    <testcase classname="\#(escape(file))" name="\#(escape(test.name))" file="\#(escape(file))" line="\#(test.line)" time="\#(seconds(result.duration))""#
        let message = test.message ?? ""
        let summary = escape(String(message.split(separator: "\n").first ?? ""))
        switch result.status {
        case .passed:
          lines.append(open + "/>")
        case .pending:
          lines.append(open + #"><skipped message="\#(summary)"/></testcase>"#)
        case .failure, .error:
          let tag = result.status == .failure ? "failure" : "error"
          let body = escape(message + (test.traceback.map { "\n" + $0 } ?? ""))
          lines.append(open + #"><\#(tag) message="\#(summary)" type="\#(tag)">\#(body)</\#(tag)></testcase>"#)
        }
      }
      lines.append("  </testsuite>")
    }
    lines.append("</testsuites>")
    return lines.joined(separator: "\n") + "\n"
  }

  private func seconds(_ value: Double) -> String { formatFixed(value, 3) }

  /// XML text: markup characters escaped, characters XML 1.0 forbids dropped.
  private func escape(_ text: String) -> String {
    var out = ""
    for scalar in text.unicodeScalars {
      switch scalar {
      case "&": out += "&amp;"
      case "<": out += "&lt;"
      case ">": out += "&gt;"
      case "\"": out += "&quot;"
      case "'": out += "&apos;"
      case "\t", "\n", "\r": out.unicodeScalars.append(scalar)
      default:
        if scalar.value >= 0x20 && scalar.value != 0xFFFE && scalar.value != 0xFFFF {
          out.unicodeScalars.append(scalar)
        }
      }
    }
    return out
  }
}
