// Outcomes the engine decides, seen through the binary: when = "failed" far downstream, names in after, deadlocks, os.exit, the critical path.
import Foundation
import Testing
import TestSupport

@Suite struct EngineOutcomeTests {
  func run(_ script: String, _ arguments: [String] = [], timeout: Double = 60) throws -> Run {
    let dir = Scratch.root.appendingPathComponent("taskrun-outcome-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
    try Data(script.utf8).write(to: dir.appendingPathComponent("w.lua"))
    return Binary.finish(try Binary.start(["--progress", "plain"] + arguments + ["w.lua"], in: dir), timeout: timeout)
  }

  @Test func whenFailedSeesACancellationBesideASkipThatSawNoFailure() throws {
    // y waits for x (skipped: nothing failed) and c (cancelled when 'bad' stopped the run):
    // y is skipped for c, and the cancellation behind it reaches notify.
    let run = try run("""
      operation { name = "fine", sh = "true" }
      operation { name = "x", after = { "fine" }, when = "failed", sh = "true" }
      operation { name = "long", sh = "sleep 3" }
      operation { name = "bad", sh = "false" }
      operation { name = "c", after = { "long" }, sh = "true" }
      operation { name = "y", after = { "x", "c" }, sh = "true" }
      operation { name = "notify", after = { "y" }, when = "failed", run = function() print("notified") end }
      """, ["-j4"])
    #expect(run.status == 1, "\(run.stdout)\(run.stderr)")
    #expect(run.stdout.contains("skipped   x: no dependency failed"), "\(run.stdout)")
    #expect(run.stdout.contains("cancelled c:"), "\(run.stdout)")
    #expect(run.stdout.contains("skipped   y: dependency 'c' cancelled"), "\(run.stdout)")
    #expect(run.stdout.contains("notified") && run.stdout.contains("ok        notify"), "\(run.stdout)")
  }
}
