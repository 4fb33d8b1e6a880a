// TapReporter: `taskrun test --tap`: TAP version 14 on standard output, the plan at the end
// (tests are declared as their blocks run, so their number is known only then).
import FoundationEssentials
import LuaHost
import TaskEngine

final class TapReporter: TestReport {
  private var number = 0

  func started(seed: Int?) {
    print("TAP version 14")
    if let seed { print("# Randomized with seed \(seed)") }
  }

  func finished(_ result: TestResult) {
    number += 1
    let test = result.test
    // '#' starts a directive in TAP, so it is escaped in descriptions (tags use it); a
    // control character (a newline would end the line) is shown as `\27`, then escaped too.
    let description = TerminalText.escaped(test.name).replacing("\\", with: "\\\\")
      .replacing("#", with: "\\#")
    switch result.status {
    case .passed:
      print("ok \(number) - \(description)")
    case .pending:
      print("ok \(number) - \(description) # SKIP \(TerminalText.escaped(firstLine(test.message ?? "pending")))")
    case .failure, .error:
      print("not ok \(number) - \(description)")
      print("  ---")
      print("  message: |")
      for line in (test.message ?? "failed").split(separator: "\n", omittingEmptySubsequences: false) {
        print("    \(TerminalText.escaped(String(line)))")  // YAML allows no control characters
      }
      print("  severity: \(result.status == .failure ? "fail" : "error")")
      print("  at:")
      print("    file: \(test.file)")
      print("    line: \(test.line)")
      print("  duration_ms: \(Int((result.duration * 1000).rounded()))")
      print("  ...")
    }
  }

  func printed(_ text: String) {
    for line in text.split(separator: "\n", omittingEmptySubsequences: false) { print("# \(line)") }
  }

  /// The plan and the counts, then `Bail out!` last if the run was interrupted: a harness
  /// ignores what follows a bail out.
  func ended(_ results: [TestResult], notRun: NotRun, elapsed: Double) {
    print("1..\(results.count)")
    print("# \(TestCounts(results, notRun: notRun).line)")
    if notRun.interrupted || notRun.text != nil {
      print("Bail out! Interrupted" + (notRun.text.map { ": \($0) not run" } ?? ""))
    }
  }

  private func firstLine(_ text: String) -> String {
    String(text.split(separator: "\n").first ?? "")
  }
}
