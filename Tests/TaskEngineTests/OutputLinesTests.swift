// OutputLines: a command's stream cut into whole lines as a terminal shows them.
import Foundation
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
    #expect(stream.stretches == ["two"], "a \"\\r\" at the end of a read may begin an overwrite: its stretch is fed at once")
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
    #expect(stream.lines.count == 1 && stream.lines[0].utf8.count == OutputLines.longest + 2)
    #expect(stream.cut.partial.isEmpty, "memory keeps nothing of it")
    stream.add(Data(repeating: 0x41, count: OutputLines.longest - 1))
    #expect(stream.lines.count == 1, "up to the limit it waits for its end")
  }

  @Test func invalidUTF8IsShownWithReplacementCharacters() {
    var stream = Stream()
    stream.add(Data([0x6F, 0x6B, 0xFF, 0x0A]))
    #expect(stream.lines == ["ok\u{FFFD}\n"])
  }
}
