// LuaHandlerReport: taskrun's side of a busted output handler in Lua (-o gtest, json, sound, a file
// or a module): the handler prints the report; this prints only what tests print, unless the
// handler did not load, when the default report takes over.
import LuaHost
import TaskEngine

final class LuaHandlerReport: TestReport {
  /// The report that stands in for a handler that did not load (busted's defaultOutput).
  var fallback: (any TestReport)?
  /// -o json: what tests print goes to standard error, so standard output holds the JSON alone.
  let printsToStandardError: Bool

  init(printsToStandardError: Bool = false) { self.printsToStandardError = printsToStandardError }

  func started(seed: Int?) { fallback?.started(seed: seed) }

  func finished(_ result: TestResult) { fallback?.finished(result) }

  /// What a test prints goes to standard output as it comes, as under busted.
  func printed(_ text: String) {
    if let fallback {
      fallback.printed(text)
    } else if printsToStandardError {
      writeStandardError(text + "\n")
    } else {
      print(text)
    }
  }

  /// An interrupted run never reaches the handler's end (busted's suite end): taskrun's counts
  /// say what ran and what did not, on standard error.
  func ended(_ results: [TestResult], notRun: NotRun, elapsed: Double) {
    if let fallback { return fallback.ended(results, notRun: notRun, elapsed: elapsed) }
    if notRun.interrupted || notRun.text != nil {
      writeStandardError("taskrun: \(TestCounts(results, notRun: notRun).line)\n")
    }
  }
}
