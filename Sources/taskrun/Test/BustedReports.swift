// BustedReports: busted's `--list` lines, for tools that read them (`-o json` is busted/json.lua).
import FoundationEssentials
import LuaHost
import TaskEngine

/// `--list`: "file:line: full name" for each test, as busted prints them; nothing runs.
final class ListReport: TestReport {
  func finished(_ result: TestResult) {
    guard !result.test.outside else { return }
    print("\(result.test.file):\(result.test.line): \(result.test.name)")
  }

  func ended(_ results: [TestResult], notRun: NotRun, elapsed: Double) {}
}
