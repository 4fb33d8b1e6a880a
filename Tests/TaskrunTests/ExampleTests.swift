// The examples in examples/ keep working: each runs to its documented exit code.
import Foundation
import Testing

@Suite struct ExampleTests {
  static let examples = Binary.packageRoot.appendingPathComponent("examples")

  static let cases: [(String, Int32)] = [
    ("app-launch.lua", 0), ("app-launch.lua -- offline", 1), ("pipeline.lua", 0), ("failing.lua", 1),
    ("-k failing.lua", 1), ("photo-import.lua", 0), ("photo-import.lua -- 6 cancel", 1), ("wwdc-app.lua", 0),
    ("wwdc-app.lua -- logged-out", 1), ("-k wwdc-app.lua -- flaky", 0), ("remote-control.lua -- 0.02", 0)
  ]

  @Test(arguments: cases)
  func exampleExitsAsDocumented(_ commandLine: String, _ status: Int32) throws {
    let arguments = commandLine.split(separator: " ").map(String.init)
    let run = try Binary.run(["-q"] + arguments, in: Self.examples)
    #expect(run.status == status, "\(run.stdout)\(run.stderr)")
    #expect(!run.stderr.contains("taskrun:"), "no script errors: \(run.stderr)")
  }

  @Test func everyExamplePlansWithoutRunning() throws {
    let files = try FileManager.default.contentsOfDirectory(atPath: Self.examples.path).filter { $0.hasSuffix(".lua") }
    #expect(files.count >= 5)
    for file in files {
      let run = try Binary.run(["-n", file], in: Self.examples)
      #expect(run.status == 0 && run.stdout.hasPrefix("Plan ("), "\(file): \(run.stdout)\(run.stderr)")
    }
  }
}
