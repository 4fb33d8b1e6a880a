// An operation's progress events report its composed progress: steps inside its progress
// move the fraction forward, never back, and the last event's words agree with its counts.
import Foundation
import TestSupport
import Testing

@Suite struct OperationProgressEventTests {
  func events(_ script: String) throws -> [[String: Any]] {
    let dir = Scratch.root.appendingPathComponent("taskrun-opprogress-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
    try script.write(to: dir.appendingPathComponent("w.lua"), atomically: true, encoding: .utf8)
    let run = try Binary.run(["-q", "--events", "events.ndjson", "w.lua"], in: dir)
    #expect(run.status == 0, "\(run.stderr)")
    return try String(contentsOf: dir.appendingPathComponent("events.ndjson"), encoding: .utf8).split(separator: "\n")
      .compactMap { try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
      .filter { $0["event"] as? String == "progress" && $0["operation"] != nil }
  }

  @Test func stepsInsideAnOperationsProgressMoveItForwardOnly() throws {
    let progress = try events(
      """
      operation { name = "steps", run = function()
        local p = progress { total = 4 }
        for i = 1, 4 do
          p:become_current(1)
          local step = progress { total = 10 }
          for j = 1, 10 do step.completed = j; sleep(0.02) end
          p:resign_current()
        end
      end }
      """)
    #expect(progress.count >= 4, "events at several ticks: \(progress)")
    var last = -1.0
    for event in progress {
      let fraction = event["fraction"] as? Double ?? -1
      #expect(fraction >= last, "the fraction never goes back: \(last) then \(event)")
      last = fraction
      #expect(event["total"] as? Int == 4, "the body's progress, not the step's: \(event)")
      let completed = event["completed"] as? Int ?? -1
      #expect(
        Double(completed) <= fraction * 4 + 1e-9 && fraction * 4 < Double(completed) + 1 + 1e-9,
        "a step's share is in the fraction, the whole steps in the counts: \(event)")
      #expect(event["additional_description"] as? String == "\(completed) of 4", "\(event)")
    }
    let final = try #require(progress.last)
    #expect(final["fraction"] as? Double == 1 && final["completed"] as? Int == 4, "\(final)")
    #expect(
      final["description"] as? String == "100% completed" && final["additional_description"] as? String == "4 of 4",
      "the words agree with the counts: \(final)")
  }

  /// A body that leaves its progress short of its total and succeeds: a progress with
  /// children is never completed by hand (its units would count twice, the talk says), so the
  /// operation's progress ends at what its child reports, in the body's units, never above 1.
  @Test func aSuccessLeavesTheProgressItsBodyLeftShortWhereItIs() throws {
    let progress = try events(
      """
      operation { name = "short", run = function()
        local p = progress { total = 8 }
        p.completed = 3
        sleep(0.3)
      end }
      """)
    let final = try #require(progress.last)
    #expect(
      final["fraction"] as? Double == 0.375 && final["completed"] as? Int == 3 && final["total"] as? Int == 8,
      "\(final)")
    #expect(final["additional_description"] as? String == "3 of 8", "\(final)")
  }
}
