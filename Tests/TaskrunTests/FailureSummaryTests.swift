// The summary's Failures: list: operations that failed by themselves, and one line for the groups around them.
import Foundation
import TestSupport
import Testing

@Suite struct FailureSummaryTests {
  /// 1,000 nested groups around one failing command: the per-operation FAILED lines stay
  /// (1,000 groups + 2), but the summary lists the two root failures and one line for the
  /// groups (it listed all 1,002, each group repeating its child's error).
  @Test func nestedGroupsAreOneLineOfTheSummary() throws {
    let dir = Scratch.root.appendingPathComponent("taskrun-failures-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
    try """
    local inner = operation { name = "leaf", sh = "echo leaf-out; exit 3" }
    for i = 1, 1000 do inner = group { name = "g" .. i, inner } end
    operation { name = "other", run = function() error("own") end }
    """.write(to: dir.appendingPathComponent("nest.lua"), atomically: true, encoding: .utf8)
    let run = try Binary.run(["-q", "-k", "nest.lua"], in: dir)
    #expect(run.status == 1, "\(run.stderr.suffix(2000))")
    let lines = run.stderr.split(separator: "\n")
    #expect(lines.filter { $0.hasPrefix("FAILED ") }.count == 1002)
    let list = try #require(lines.firstIndex(of: "Failures:").map { Array(lines[($0 + 1)...]) })
    #expect(
      list == [
        "  leaf: exited with status 3: echo leaf-out; exit 3",
        "    | leaf-out",
        "  other: nest.lua:3: own",
        "  1000 groups failed because of 'leaf': g1, g2, g3, …"
      ], "\(list.prefix(8))")
    #expect(run.stdout.contains("0 succeeded, 1002 failed"), "\(run.stdout)")
  }
}
