// Runs every script in Tests/Workflows and checks it against the expectations in its header:
//   -- args: ...        the command line, with @ standing for the script (default: @)
//   -- exit: N          the exit code
//   -- stdout: text     appears in stdout, in the order given (stderr: likewise)
//   -- not-stdout: text never appears in stdout (not-stderr: likewise)
import Foundation
import Testing

struct WorkflowExpectation: CustomTestStringConvertible, Sendable {
  var file: String
  var arguments: [String] = []
  var exit: Int32 = 0
  var stdout: [String] = []
  var stderr: [String] = []
  var notStdout: [String] = []
  var notStderr: [String] = []

  var testDescription: String { file }

  static func load(_ file: String) throws -> WorkflowExpectation {
    let text = try String(contentsOf: Binary.workflows.appendingPathComponent(file), encoding: .utf8)
    var expectation = WorkflowExpectation(file: file)
    for line in text.split(separator: "\n") where line.hasPrefix("-- ") {
      let body = line.dropFirst(3)
      guard let colon = body.firstIndex(of: ":") else { continue }
      let key = body[..<colon]
      let value = String(body[body.index(after: colon)...].dropFirst())
      switch key {
      case "args": expectation.arguments = value.split(separator: " ").map(String.init)
      case "exit": expectation.exit = Int32(value) ?? -1
      case "stdout": expectation.stdout.append(value)
      case "stderr": expectation.stderr.append(value)
      case "not-stdout": expectation.notStdout.append(value)
      case "not-stderr": expectation.notStderr.append(value)
      default: continue
      }
    }
    return expectation
  }

  static var all: [WorkflowExpectation] {
    let files = (try? FileManager.default.contentsOfDirectory(atPath: Binary.workflows.path)) ?? []
    return files.filter { $0.hasSuffix(".lua") }.sorted().compactMap { try? load($0) }
  }
}

/// Whether `parts` occur in `text` one after another.
func containsInOrder(_ text: String, _ parts: [String]) -> String? {
  var rest = text[...]
  for part in parts {
    guard let range = rest.range(of: part) else { return part }
    rest = rest[range.upperBound...]
  }
  return nil
}

@Suite struct WorkflowTests {
  @Test func thereAreWorkflowsToRun() {
    #expect(WorkflowExpectation.all.count >= 10)
  }

  @Test(arguments: WorkflowExpectation.all)
  func workflowBehavesAsItsHeaderSays(_ expected: WorkflowExpectation) throws {
    let arguments = (expected.arguments.isEmpty ? ["@"] : expected.arguments).map { $0 == "@" ? expected.file : $0 }
    let run = try Binary.run(arguments)
    let context = "stdout:\n\(run.stdout)\nstderr:\n\(run.stderr)"
    #expect(run.status == expected.exit, "\(context)")
    if let missing = containsInOrder(run.stdout, expected.stdout) {
      Issue.record("stdout lacks (in order) '\(missing)'\n\(context)")
    }
    if let missing = containsInOrder(run.stderr, expected.stderr) {
      Issue.record("stderr lacks (in order) '\(missing)'\n\(context)")
    }
    for text in expected.notStdout where run.stdout.contains(text) {
      Issue.record("stdout has '\(text)'\n\(context)")
    }
    for text in expected.notStderr where run.stderr.contains(text) {
      Issue.record("stderr has '\(text)'\n\(context)")
    }
    #expect(!run.stdout.contains("\u{1B}["), "no escape codes when not on a terminal")
  }
}
