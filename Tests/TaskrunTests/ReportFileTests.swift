// --events and --trace: a write that fails is reported and fails the run; one file for both is refused.
import Foundation
import TestSupport
import Testing

@Suite struct ReportFileTests {
  func folder() throws -> URL {
    let dir = Scratch.root.appendingPathComponent("taskrun-reports-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
    try #"operation { name = "a", sh = "true" }"#.write(
      to: dir.appendingPathComponent("taskrun.lua"), atomically: true, encoding: .utf8)
    // A link to /dev/full: a write there fails with ENOSPC, and a trace written by renaming a
    // new file over the path would replace the link, not /dev/full itself.
    try FileManager.default.createSymbolicLink(
      atPath: dir.appendingPathComponent("full").path, withDestinationPath: "/dev/full")
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
      #expect(
        run.status == 2 && run.stderr.contains("--events and --trace name the same file"),
        "\(events) \(trace): \(run.stderr)")
    }
    let apart = try Binary.run(["-q", "--events", "events.json", "--trace", "trace.json"], in: dir)
    #expect(apart.status == 0, "\(apart.stderr)")
    let trace =
      try JSONSerialization.jsonObject(with: Data(contentsOf: dir.appendingPathComponent("trace.json")))
      as? [String: Any]
    #expect((trace?["traceEvents"] as? [Any])?.isEmpty == false)
    #expect(
      try String(contentsOf: dir.appendingPathComponent("events.json"), encoding: .utf8).contains("\"run_finish\""))
  }

  /// The paths are compared as the kernel follows them: a link to a file not made yet
  /// (the run would create it through the link) and `..` after a linked folder.
  @Test func oneFileThroughLinksIsRefusedBeforeItExists() throws {
    let dir = try folder()
    let manager = FileManager.default
    try manager.createDirectory(at: dir.appendingPathComponent("inner/deeper"), withIntermediateDirectories: true)
    try manager.createSymbolicLink(atPath: dir.appendingPathComponent("l.json").path, withDestinationPath: "e.json")
    try manager.createSymbolicLink(atPath: dir.appendingPathComponent("d").path, withDestinationPath: "inner/deeper")
    try manager.createSymbolicLink(atPath: dir.appendingPathComponent("chain.json").path, withDestinationPath: "l.json")
    for (events, trace) in [
      ("e.json", "l.json"), ("l.json", "e.json"), ("chain.json", "e.json"),
      ("inner/x.json", "d/../x.json"), ("d/../x.json", "inner/./x.json")
    ] {
      let run = try Binary.run(["-q", "--events", events, "--trace", trace], in: dir)
      #expect(
        run.status == 2 && run.stderr.contains("--events and --trace name the same file"),
        "\(events) \(trace): \(run.stderr)")
      #expect(!manager.fileExists(atPath: dir.appendingPathComponent("e.json").path), "nothing was written")
    }
    // `d/../x.json` is inner/x.json, not ./x.json: these two are apart.
    let apart = try Binary.run(["-q", "--events", "x.json", "--trace", "d/../x.json"], in: dir)
    #expect(apart.status == 0, "\(apart.stderr)")
    #expect(try String(contentsOf: dir.appendingPathComponent("x.json"), encoding: .utf8).contains("\"run_finish\""))
    #expect(manager.fileExists(atPath: dir.appendingPathComponent("inner/x.json").path))
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
    #expect(
      run.status == 0 && run.stdout.contains("finalized") && !run.stderr.contains("cannot write"),
      "\(run.stdout)\(run.stderr)")
  }
}
