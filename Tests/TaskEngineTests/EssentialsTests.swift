// What TaskEngine/Essentials.swift replaces gives what Foundation gave: trimming, printf
// formatting, whole reads and writes, a lock.
import Foundation
import TestSupport
import Testing

@testable import TaskEngine

@Suite struct EssentialsTests {
  /// Random strings of letters, spaces of several kinds and line ends (seeded:
  /// TASKRUN_ESSENTIALS_SEED repeats a run) trim as Foundation's character sets trim them.
  @Test func trimmingMatchesFoundationsCharacterSets() {
    var rng = SplitMix64.seeded(by: "TASKRUN_ESSENTIALS_SEED", for: "EssentialsTests")
    let pieces = [
      "a", "é", "語", " ", "\t", "\n", "\r", "\r\n", "\u{0B}", "\u{0C}", "\u{85}", "\u{A0}",
      "\u{2028}", "\u{2029}", "\u{3000}", "\u{2009}", "-"
    ]
    for _ in 0..<5_000 {
      let text = (0..<rng.int(0...8)).map { _ in rng.pick(pieces) }.joined()
      #expect(text.trimmed() == text.trimmingCharacters(in: .whitespacesAndNewlines), "\(Array(text.unicodeScalars))")
      #expect(
        text.trimmed(newlines: false) == text.trimmingCharacters(in: .whitespaces), "\(Array(text.unicodeScalars))")
      #expect(text.trimmingNewlines == text.trimmingCharacters(in: .newlines), "\(Array(text.unicodeScalars))")
    }
  }

  @Test func cFormatIsPrintf() {
    #expect(
      cFormat("%4d|%-5.1f|%.2f|%x", 7, 2.25, 2.005, 255) == String(format: "%4d|%-5.1f|%.2f|%x", 7, 2.25, 2.005, 255))
    #expect(cFormat("%.1f", Double.infinity) == "inf" && cFormat("%.3f", -Double.nan) == "-nan")
    #expect(formatFixed(1e20, 2) == "100000000000000000000.00")
  }

  @Test func writeAllAndReadAllMoveEveryByte() throws {
    var fds: [Int32] = [-1, -1]
    #expect(pipe(&fds) == 0)
    let bytes = (0..<200_000).map { UInt8(truncatingIfNeeded: $0 &* 31) }  // more than a pipe holds
    let (readEnd, writeEnd) = (fds[0], fds[1])
    let writer = Thread {
      #expect(writeAll(writeEnd, bytes))
      close(writeEnd)
    }
    writer.start()
    #expect(readAll(readEnd) == bytes)
    close(readEnd)
    #expect(!writeAll(-1, [1]), "a write error is reported")
  }

  @Test func theLockKeepsCountsWhole() async {
    let lock = Lock()
    final class Box: @unchecked Sendable { var count = 0 }
    let box = Box()
    await withTaskGroup(of: Void.self) { group in
      for _ in 0..<4 {
        group.addTask {
          for _ in 0..<10_000 { lock.lock(); box.count += 1; lock.unlock() }
        }
      }
    }
    #expect(box.count == 40_000)
  }
}
