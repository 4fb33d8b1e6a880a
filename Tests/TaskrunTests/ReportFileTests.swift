// --events and --trace: a write that fails is reported and fails the run; one file for both is refused.
import Foundation
import Testing
import TestSupport

@Suite struct ReportFileTests {
  func folder() throws -> URL {
    let dir = Scratch.root.appendingPathComponent("taskrun-reports-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
    try #"operation { name = "a", sh = "true" }"#.write(to: dir.appendingPathComponent("taskrun.lua"), atomically: true, encoding: .utf8)
    // A link to /dev/full: a write there fails with ENOSPC, and a trace written by renaming a
    // new file over the path would replace the link, not /dev/full itself.
    try FileManager.default.createSymbolicLink(atPath: dir.appendingPathComponent("full").path, withDestinationPath: "/dev/full")
    return dir
  }

  @Test(arguments: [("--events", "events"), ("--trace", "the trace")])
  func aWriteErrorIsReportedAndTheExitIsOne(_ option: String, _ what: String) throws {
    let dir = try folder()
    let run = try Binary.run(["-q", option, "full"], in: dir)
    #expect(run.status == 1, "\(run.stdout)\(run.stderr)")
    #expect(run.stderr.contains("taskrun: cannot write \(what) to 'full': No space left on device"), "\(run.stderr)")
    let link = try FileManager.default.destinationOfSymbolicLink(atPath: dir.appendingPathComponent("full").path)
    #expect(link == "/dev/full", "the file was written in place")
  }

  @Test func oneFileForEventsAndTraceIsRefused() throws {
    let dir = try folder()
    for (events, trace) in [("out.json", "./out.json"), ("-", "/dev/stderr"), ("out.json", "\(dir.path)/out.json")] {
      let run = try Binary.run(["-q", "--events", events, "--trace", trace], in: dir)
      #expect(run.status == 2 && run.stderr.contains("--events and --trace name the same file"), "\(events) \(trace): \(run.stderr)")
    }
    let apart = try Binary.run(["-q", "--events", "events.json", "--trace", "trace.json"], in: dir)
    #expect(apart.status == 0, "\(apart.stderr)")
    let trace = try JSONSerialization.jsonObject(with: Data(contentsOf: dir.appendingPathComponent("trace.json"))) as? [String: Any]
    #expect((trace?["traceEvents"] as? [Any])?.isEmpty == false)
    #expect(try String(contentsOf: dir.appendingPathComponent("events.json"), encoding: .utf8).contains("\"run_finish\""))
  }

  /// What comes after the run's end (a finalizer prints as the state closes) is no write
  /// error: the events file is complete and closed, and the exit stays 0.
  @Test func eventsAfterTheEndAreNoWriteError() throws {
    let dir = try folder()
    try """
      operation { name = "a", sh = "true" }
      setmetatable({}, { __gc = function() print("finalized") end })
      """.write(to: dir.appendingPathComponent("taskrun.lua"), atomically: true, encoding: .utf8)
    let run = try Binary.run(["-q", "--events", "events.json"], in: dir)
    #expect(run.status == 0 && run.stdout.contains("finalized") && !run.stderr.contains("cannot write"), "\(run.stdout)\(run.stderr)")
  }
}
