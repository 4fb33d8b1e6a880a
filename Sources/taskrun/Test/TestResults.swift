// TestResults: turns the run's operation events into test results for the test reports.
import FoundationEssentials
import LuaHost
import TaskEngine

/// A finished test and how long its operation took.
struct TestResult {
  var test: TestCase
  var duration: Double
  var status: TestCase.Status { test.status ?? .error }
}

/// A report of a test run: told when it starts, of each result as it comes, of what tests
/// print, and of the end (with every result, in the order they finished, and how many tests
/// an interrupt kept from running).
protocol TestReport: AnyObject {
  func started(seed: Int?)
  func finished(_ result: TestResult)
  func printed(_ text: String)
  func ended(_ results: [TestResult], notRun: NotRun, elapsed: Double)
}

extension TestReport {
  func started(seed: Int?) {}
  func finished(_ result: TestResult) {}
  func printed(_ text: String) {}
}

/// The event sink of test mode: finds the test behind each finished operation (through
/// `lookup`, given by the command) and tells the reports.
final class TestResults: EventSink {
  private let lookup: (String) -> [TestCase]
  private let reports: [any TestReport]
  private(set) var results: [TestResult] = []
  private(set) var notRun = NotRun()
  private var startTime: Double = 0

  init(reports: [any TestReport], lookup: @escaping (String) -> [TestCase]) {
    self.reports = reports
    self.lookup = lookup
  }

  func receive(_ event: RunEvent) {
    switch event {
    case .runStart(let time):
      startTime = time
    case .message(_, _, let text, _):
      for report in reports { report.printed(text) }
    case .operationFinish(_, let name, _, let duration, _):
      for test in lookup(name) {
        guard test.ran else {
          if test.outside { notRun.blocks += 1 } else { notRun.tests += 1 }
          continue
        }
        let result = TestResult(test: test, duration: test.outside ? 0 : duration)
        results.append(result)
        for report in reports { report.finished(result) }
      }
    case .runFinish(let time, let summary):
      notRun.interrupted = summary.interrupted
      for report in reports { report.ended(results, notRun: notRun, elapsed: time - startTime) }
    default:
      break
    }
  }
}

/// What an interrupt kept from running: tests, and blocks (files, describes) whose bodies
/// never ran, so their tests were never declared; and whether the run was interrupted at
/// all (Ctrl-C in a file's top level or in the last test keeps nothing else from running).
struct NotRun {
  var tests = 0, blocks = 0
  var interrupted = false

  /// "2 tests and 1 block", or nil when nothing was kept from running.
  var text: String? {
    let parts = [(tests, "test"), (blocks, "block")].filter { $0.0 > 0 }.map {
      "\($0.0) \($0.1)\($0.0 == 1 ? "" : "s")"
    }
    return parts.isEmpty ? nil : parts.joined(separator: " and ")
  }
}

/// Counts for the closing line: errors count as failed; tests an interrupt kept from
/// starting count as not run.
struct TestCounts {
  var passed = 0, failed = 0, skipped = 0
  var notRun = NotRun()

  init(_ results: [TestResult], notRun: NotRun = NotRun()) {
    self.notRun = notRun
    for result in results {
      switch result.status {
      case .passed: passed += 1
      case .failure, .error: failed += 1
      case .pending: skipped += 1
      }
    }
  }

  /// "N passed, N failed", then ", N skipped" when any were, and ", N not run (interrupted)"
  /// or " (interrupted)" when the run was interrupted.
  var line: String {
    "\(passed) passed, \(failed) failed" + (skipped > 0 ? ", \(skipped) skipped" : "")
      + (notRun.text.map { ", \($0) not run (interrupted)" } ?? (notRun.interrupted ? " (interrupted)" : ""))
  }
}
