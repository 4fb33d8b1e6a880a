// TestReporter: the readable report of `taskrun test`: a mark per test (or a line with -v),
// then failures, errors and pending tests in full, then the closing counts.
import FoundationEssentials
import Glibc
import LuaHost
import TaskEngine

final class TestReporter: TestReport {
  let verbose: Bool
  let color: ColorPolicy
  let style: Marks
  /// --defer-print: nothing while the tests run, all at the end (busted's).
  let deferred: Bool
  private var marks = 0

  /// busted's utfTerminal marks (● ◼ ✱ ◌) or plainTerminal's (+ - * .).
  enum Marks { case utf, plain }

  init(verbose: Bool, color: ColorPolicy, marks: Marks = .utf, deferred: Bool = false) {
    self.verbose = verbose
    self.color = color
    self.style = marks
    self.deferred = deferred
  }

  func started(seed: Int?) {
    if let seed { print("Randomized with seed \(seed) (--seed \(seed) repeats this order)") }
  }

  /// How each status shows: a word with -v, else a mark (busted's), and its colour.
  static func style(_ status: TestCase.Status, _ marks: Marks = .utf) -> (word: String, mark: String, color: String) {
    let plain = marks == .plain
    switch status {
    case .passed: return ("ok     ", plain ? "+" : "●", "32")
    case .failure: return ("FAIL   ", plain ? "-" : "◼", "31")
    case .error: return ("ERROR  ", plain ? "*" : "✱", "35")
    case .pending: return ("pending", plain ? "." : "◌", "33")
    }
  }

  func finished(_ result: TestResult) {
    if deferred { return }
    let style = Self.style(result.status, self.style)
    if verbose {
      print(
        "\(color.paint(style.word, style.color)) \(TerminalText.escaped(result.test.name)) (\(formatSeconds(result.duration)))"
      )
      return
    }
    print(color.paint(style.mark, style.color), terminator: "")
    marks += 1
    fflush(nil)
  }

  func printed(_ text: String) {
    if marks > 0 { print(""); marks = 0 }
    print(text)
  }

  func ended(_ results: [TestResult], notRun: NotRun, elapsed: Double) {
    if marks > 0 { print("") }
    for (title, status) in [("Pending", TestCase.Status.pending), ("Failure", .failure), ("Error", .error)] {
      for result in results where result.status == status {
        let test = result.test
        print("")
        print(
          color.paint(
            "\(title) \(style == .plain ? "->" : "→") \(test.file):\(test.line)", status == .pending ? "33" : "31"))
        print(TerminalText.escaped(test.name))
        // A message may quote a command's output (an assertion on sh's stdout): escaped.
        if let message = test.message, status != .pending || message != "pending" {
          print(TerminalText.escaped(message, keepingLines: true))
        }
        if verbose, status == .error, let traceback = test.traceback, !traceback.isEmpty {
          print(TerminalText.escaped(traceback.trimmingNewlines, keepingLines: true))
        }
      }
    }
    let files = Set(results.map(\.test.file)).count
    print("")
    print(
      "\(results.count) test\(results.count == 1 ? "" : "s") from \(files) file\(files == 1 ? "" : "s") in \(formatSeconds(elapsed))"
    )
    print(TestCounts(results, notRun: notRun).line)
  }
}
