// OutputLines: a command's stream cut into whole lines as a terminal shows them.
import Foundation
import TestSupport
import Testing

@testable import TaskEngine

@Suite struct OutputLinesTests {
  /// A stream fed in pieces, with what it passed on.
  struct Stream {
    var cut = OutputLines()
    var lines: [String] = []
    var stretches: [String] = []

    mutating func add(_ text: String) { add(Data(text.utf8)) }
    mutating func add(_ data: Data) {
      var lines: [String] = [], stretches: [String] = []
      cut.add(data, lines: { lines.append($0) }, stretch: { stretches.append($0) })
      self.lines += lines
      self.stretches += stretches
    }
  }

  @Test func onlyWholeLinesArePassedOnWhateverTheReadsAre() {
    var stream = Stream()
    stream.add("comp")
    #expect(stream.lines.isEmpty, "half a line waits")
    stream.add("iling a.c\nlinking")
    stream.add(" b\nand ")
    #expect(stream.lines == ["compiling a.c\n", "linking b\n"])
    #expect(stream.cut.finish() == "and \n", "at the end of the stream the rest is a line of its own")
    #expect(stream.cut.finish() == nil, "and only once")
  }

  @Test func aStreamEndingOnANewlineLeavesNothing() {
    var stream = Stream()
    stream.add("one\ntwo\n")
    #expect(stream.lines == ["one\ntwo\n"], "the lines of one read go together")
    #expect(stream.cut.finish() == nil)
  }

  @Test func carriageReturnNewlineEndsALineLikeNewline() {
    var stream = Stream()
    stream.add("one\r\ntwo\r")
    stream.add("\n")
    #expect(stream.lines == ["one\n", "two\n"])
    #expect(
      stream.stretches == ["two"], "a \"\\r\" at the end of a read may begin an overwrite: its stretch is fed at once")
  }

  @Test func aLineOverwrittenWithCarriageReturnsShowsItsLastStretch() {
    var stream = Stream()
    stream.add("  10%\r  50%\r")
    #expect(stream.lines.isEmpty)
    #expect(stream.stretches == ["  10%", "  50%"], "each finished stretch at once, for progress patterns")
    stream.add(" 90%\r100%\n")
    #expect(stream.lines == ["100%\n"], "as a terminal shows it")
    #expect(stream.stretches == ["  10%", "  50%"], "a line that ends in the same read is passed on whole")
    var ended = Stream()
    ended.add("downloading 3%\rdownloading 7%")
    #expect(ended.cut.finish() == "downloading 7%\n", "an unfinished overwritten line ends as shown")
  }

  @Test func aLineWithNoEndInSightIsPassedOnAtItsLimit() {
    var stream = Stream()
    let binary = Data(repeating: 0x41, count: OutputLines.longest + 1)
    stream.add(binary)
    #expect(stream.lines.count == 1 && stream.lines[0].utf8.count == OutputLines.longest + 1)
    #expect(stream.cut.partial.count == 1, "memory keeps only what is past the piece")
    stream.add(Data(repeating: 0x41, count: OutputLines.longest - 1))
    #expect(stream.lines.count == 1, "up to the limit it waits for its end")
  }

  /// `head -c 3000000 /dev/zero | tr '\0' b; echo; echo END`, read in many different sizes.
  @Test func aLongLineIsCutIntoTheSamePiecesWhateverTheReadSizes() {
    let length = 3_000_000
    let input = [UInt8](repeating: 0x62, count: length) + Array("\nEND\n".utf8)
    let whole = length / OutputLines.longest
    let rest = length - whole * OutputLines.longest
    let piece = String(repeating: "b", count: OutputLines.longest) + "\n"
    let expected = Array(repeating: piece, count: whole) + [String(repeating: "b", count: rest) + "\n", "END\n"]
    var rng = SplitMix64.seeded(by: "TASKRUN_LINES_SEED", for: "OutputLinesTests.longLine")
    let fixed = [4096, 65536, 65537, 73728, 131072, 1 << 20, input.count]
    for plan in fixed.map({ size in { (_: inout SplitMix64) in size } }) + [
      { $0.int(1...300_000) }, { $0.int(60_000...70_000) }
    ] {
      var stream = Stream()
      var bytes = Stream(), raw: [[UInt8]] = []
      var at = 0
      while at < input.count {
        let end = min(input.count, at + plan(&rng))
        stream.add(Data(input[at..<end]))
        bytes.cut.addBytes(Data(input[at..<end]), lines: { raw.append($0) })
        at = end
      }
      // Lines come in batches (whole lines of a read at once): compare what they make.
      #expect(stream.lines.joined() == expected.joined())
      #expect(stream.cut.finish() == nil)
      #expect(raw.map { String(decoding: $0, as: UTF8.self) }.joined() == expected.joined(), "as bytes too")
    }
  }

  @Test func aLongLineAmongShortOnesInOneReadIsCutAsInSmallReads() {
    let short = String(repeating: "short line\n", count: 20_000)
    let long = String(repeating: "y", count: 2 * OutputLines.longest + 5)
    let text = short + long + "\n" + short
    let y = { (count: Int) in String(repeating: "y", count: count) + "\n" }
    let expected = short + y(OutputLines.longest) + y(OutputLines.longest) + y(5) + short
    for size in [text.utf8.count, 1000, 4096] {
      var stream = Stream()
      let bytes = Array(text.utf8)
      for at in stride(from: 0, to: bytes.count, by: size) {
        stream.add(Data(bytes[at..<min(bytes.count, at + size)]))
      }
      #expect(stream.lines.joined() == expected, "reads of \(size)")
    }
  }

  @Test func aPieceIsCutFromTheStretchAnOverwrittenLineShows() {
    let long = String(repeating: "x", count: OutputLines.longest + 10)
    let text = "a\r" + long + "\rdone\n"
    var whole = Stream(), byHalves = Stream()
    whole.add(text)
    let half = OutputLines.longest + 7  // inside the long stretch
    byHalves.add(Data(Array(text.utf8)[..<half]))
    byHalves.add(Data(Array(text.utf8)[half...]))
    let expected = [String(repeating: "x", count: OutputLines.longest) + "\n", "done\n"]
    #expect(whole.lines.joined() == expected.joined())
    #expect(byHalves.lines.joined() == expected.joined())
  }

  @Test func invalidUTF8IsShownWithReplacementCharacters() {
    var stream = Stream()
    stream.add(Data([0x6F, 0x6B, 0xFF, 0x0A]))
    #expect(stream.lines == ["ok\u{FFFD}\n"])
  }

  /// Random bytes, weighted toward what makes cutting and decoding hard: newlines, carriage
  /// returns, lead bytes of every length, continuation bytes, ASCII.
  static func bytes(_ count: Int, _ rng: inout SplitMix64) -> [UInt8] {
    (0..<count).map { _ in
      switch rng.int(0...9) {
      case 0: 10
      case 1: 13
      case 2: UInt8(rng.int(0x80...0xBF))
      case 3: rng.pick([0xC2, 0xDF, 0xE0, 0xED, 0xEF, 0xF0, 0xF4, 0xF5, 0xC0, 0xFF])
      case 4...6: UInt8(rng.int(0x20...0x7E))
      default: UInt8(rng.int(0...255))
      }
    }
  }

  @Test func binaryOutputIsDecodedAsTheStandardLibraryDoes() {
    var rng = SplitMix64.seeded(by: "TASKRUN_UTF8_SEED", for: "OutputLinesTests.utf8")
    for _ in 0..<2000 {
      var input = Self.bytes(rng.int(0...64), &rng)
      if rng.chance(0.3) { input += Array("é€😀 ok".utf8).shuffled(using: &rng) }
      let ours = input.withUnsafeBufferPointer { UTF8Repair.string($0) }
      #expect(Array(ours.utf8) == Array(String(decoding: input, as: UTF8.self).utf8), "\(input)")
    }
  }

  /// The cut as it was before it worked on raw bytes (through `Data`), for comparison.
  struct Reference {
    var partial = Data()
    mutating func add(_ data: Data, lines: (String) -> Void, stretch: (String) -> Void) {
      var pending = partial + data
      if let lastNewline = pending.lastIndex(of: 10) {
        lines(Self.asShown(pending[pending.startIndex...lastNewline]))
        pending = Data(pending[pending.index(after: lastNewline)...])
      }
      if let lastReturn = pending.lastIndex(of: 13) {
        for part in pending[pending.startIndex..<lastReturn].split(separator: 13) where !part.isEmpty {
          stretch(String(decoding: part, as: UTF8.self))
        }
        if lastReturn != pending.index(before: pending.endIndex) {
          pending = Data(pending[pending.index(after: lastReturn)...])
        } else if let previous = pending[..<lastReturn].lastIndex(of: 13) {
          pending = Data(pending[pending.index(after: previous)...])
        }
      }
      while pending.count > OutputLines.longest {
        lines(String(decoding: pending.prefix(OutputLines.longest), as: UTF8.self) + "\n")
        pending = Data(pending.dropFirst(OutputLines.longest))
      }
      partial = pending
    }
    mutating func finish() -> String? {
      guard !partial.isEmpty else { return nil }
      defer { partial = Data() }
      return Self.asShown(partial + [10])
    }
    static func asShown(_ lines: Data) -> String {
      var text = ""
      for line in lines.split(separator: 10, omittingEmptySubsequences: false).dropLast() {
        let stretches = line.split(separator: 13, omittingEmptySubsequences: true)
        text += String(decoding: stretches.last ?? line[line.startIndex..<line.startIndex], as: UTF8.self) + "\n"
      }
      return text
    }
  }

  @Test func randomStreamsInRandomReadsAreCutAsBefore() {
    var rng = SplitMix64.seeded(by: "TASKRUN_LINES_SEED", for: "OutputLinesTests.lines")
    for _ in 0..<200 {
      var ours = Stream(), reference = Reference()
      var expected: [String] = [], stretches: [String] = []
      for _ in 0..<rng.int(1...20) {
        // Now and then a read longer than a line may be, with no newline in it. (One of just
        // `longest` bytes would differ: the reference cuts a stretch only while it is the
        // last, where pieces come as they would byte by byte, `aPieceIsCutFromTheStretch…`.)
        let read =
          rng.chance(0.05)
          ? [UInt8](repeating: 0x41, count: OutputLines.longest + rng.int(1...100))
          : Self.bytes(rng.int(0...300), &rng)
        ours.add(Data(read))
        reference.add(Data(read), lines: { expected.append($0) }, stretch: { stretches.append($0) })
      }
      #expect(ours.lines == expected)
      #expect(ours.stretches == stretches)
      #expect(ours.cut.finish() == reference.finish())
    }
  }
}
