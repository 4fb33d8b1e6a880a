// BustedReports: busted's `-o json` object and its `--list` lines, for tools that read them.
import FoundationEssentials
import LuaHost
import TaskEngine

/// `-o json`: one object when the run ends, as busted's json output writes it: successes,
/// failures, errors and pendings (each with the full name, message and where it is), and
/// the duration. What tests print goes to standard error so standard output stays JSON.
final class JSONTestReport: TestReport {
  func printed(_ text: String) {
    writeStandardError(text + "\n")
  }

  func ended(_ results: [TestResult], notRun: NotRun, elapsed: Double) {
    func entry(_ result: TestResult) -> JSON {
      let test = result.test
      // A file that does not load has no place in busted's report (it never ran).
      let trace =
        test.outside && test.name == test.file
        ? JSON.object([])
        : .object([
          ("short_src", .string(test.file)), ("currentline", .int(test.line)),
          ("traceback", test.traceback.map(JSON.string) ?? .null)
        ])
      let descriptor = test.outside ? (test.file == test.name ? "file" : "describe") : "it"
      return .object([
        ("name", .string(test.name)),
        ("message", test.message.map(JSON.string) ?? .null),
        ("trace", trace),
        (
          "element",
          .object([
            ("name", .string(test.name)), ("descriptor", .string(descriptor)),
            ("duration", .number(result.duration)), ("trace", trace)
          ])
        ),
        ("isError", .bool(result.status == .error))
      ])
    }
    func list(_ status: TestCase.Status) -> JSON {
      .array(results.filter { $0.status == status }.map(entry))
    }
    let object = JSON.object([
      ("pendings", list(.pending)), ("successes", list(.passed)), ("failures", list(.failure)),
      ("errors", list(.error)), ("duration", .number(elapsed))
    ])
    print(object.text)
  }
}

/// `--list`: "file:line: full name" for each test, as busted prints them; nothing runs.
final class ListReport: TestReport {
  func finished(_ result: TestResult) {
    guard !result.test.outside else { return }
    print("\(result.test.file):\(result.test.line): \(result.test.name)")
  }

  func ended(_ results: [TestResult], notRun: NotRun, elapsed: Double) {}
}
