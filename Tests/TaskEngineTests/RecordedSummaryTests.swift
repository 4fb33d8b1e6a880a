// RecordedSummary: a run's summary kept in the store and read back, bounded, and a damaged one refused.
import Foundation
import TestSupport
import Testing

@testable import TaskEngine

@Suite struct RecordedSummaryRunStoreTests {
  static func summary(steps: Int, failures: Int, output: Int) -> RunSummary {
    var s = RunSummary()
    (s.succeeded, s.failed, s.upToDate, s.resumed, s.elapsed) = (10, failures, 2, 1, 3.5)
    s.slowest = [RunSummary.Timing(name: "slow", duration: 2), RunSummary.Timing(name: "b", duration: 1)]
    s.criticalPath = (0..<steps).map {
      var t = RunSummary.Timing(name: "s\($0)", duration: 0.5)
      if $0 > 0 { t.reason = StartReason(after: "s\($0 - 1)", kind: "queue", detail: "main") }
      return t
    }
    s.failures = (0..<failures).map {
      RunSummary.Failure(
        name: "f\($0)", outcome: .failed, error: "exit 1", output: String(repeating: "line\n", count: output / 5),
        kind: .command)
    }
    return s
  }

  @Test func aSummaryReadsBackAsItWasWritten() throws {
    let s = Self.summary(steps: 3, failures: 2, output: 100)
    let back = try #require(RecordedSummary(bytes: RecordedSummary.encoded(s)))
    #expect(back.summary == s)
    #expect(back.omittedSteps == 0 && back.omittedFailures == 0)
  }

  @Test func aHugeSummaryIsBounded() throws {
    let s = Self.summary(steps: 5000, failures: 1500, output: 10_000)
    let back = try #require(RecordedSummary(bytes: RecordedSummary.encoded(s)))
    #expect(back.summary.criticalPath.count == 2000 && back.omittedSteps == 3000)
    #expect(back.omittedSeconds == 1500)
    #expect(back.summary.criticalPath.first?.name == "s0" && back.summary.criticalPath.last?.name == "s4999")
    #expect(back.summary.failures.count == 1000 && back.omittedFailures == 500)
    #expect(back.summary.failures.allSatisfy { $0.output.utf8.count <= 4096 && $0.output.hasPrefix("line\n") })
  }

  @Test func damagedBytesAreNoSummaryAndBadSecondsReadAsZero() {
    #expect(RecordedSummary(bytes: []) == nil)
    #expect(RecordedSummary(bytes: [1, 2, 3]) == nil)
    var bytes = RecordedSummary.encoded(Self.summary(steps: 2, failures: 1, output: 10))
    #expect(RecordedSummary(bytes: Array(bytes.dropLast())) == nil)
    for k in 0..<8 { bytes[1 + k] = withUnsafeBytes(of: Double.nan.bitPattern.littleEndian) { $0[k] } }
    #expect(RecordedSummary(bytes: bytes)?.summary.elapsed == 0)
    var random = SplitMix64(state: 41)
    for _ in 0..<2000 {
      let noise = (0..<Int(random.next() % 300)).map { _ in UInt8(truncatingIfNeeded: random.next()) }
      _ = RecordedSummary(bytes: [1] + noise)  // no trap
    }
  }

  @Test func theStoreKeepsTheSummaryAndTheTargetsOfARun() throws {
    let dir = try Scratch.folder("summary-store", [:]).path
    let store = try RunStore(workflowFolder: dir, script: "w.lua", lock: true)
    let run = try store.beginRun(command: "taskrun w.lua a b", targets: ["a", "b"], at: 100)
    let s = Self.summary(steps: 2, failures: 1, output: 20)
    store.endRun(run, outcome: "failed", counts: ["succeeded": 7, "failed": 1, "resumed": 1], summary: s, at: 103)
    #expect(store.summary(of: run)?.summary == s)
    let record = try #require(store.runs(limit: 1).first)
    #expect(record.targets == ["a", "b"] && record.counts["resumed"] == 1 && record.counts["failed"] == 1)
    store.prune(keeping: 1)
    let next = try store.beginRun(command: "taskrun w.lua", at: 200)
    store.endRun(next, outcome: "succeeded", counts: [:], summary: RunSummary(), at: 201)
    store.prune(keeping: 1)
    #expect(store.summary(of: run) == nil, "a pruned run's summary goes with it")
  }
}
