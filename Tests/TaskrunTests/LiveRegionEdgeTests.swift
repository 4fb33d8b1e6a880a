// The live view at the terminal's edges, in tmux: a region on the top row, events on the same
// terminal, a terminal narrower than 20 columns, a paused file progress.
import Foundation
import TestSupport
import Testing

@Suite(.serialized) struct LiveRegionEdgeTests {
  static let hasTmux = TerminalTests.hasTmux

  func workflow(_ text: String) throws -> URL { try TerminalTests().workflow(text) }

  /// Lines of the overall bar on a screen ("… 0 done  2 running …").
  func overallLines(_ screen: String) -> Int {
    screen.split(separator: "\n").filter { $0.range(of: #"\d+%  \d+ done"#, options: .regularExpression) != nil }.count
  }

  /// After `clear` the region starts on the top row; redrawing it must not push the screen
  /// into the scrollback (tmux's scroll-on-clear does for an erase from the top left corner).
  @Test(.enabled(if: hasTmux)) func aRegionOnTheTopRowLeavesTheScrollbackAlone() throws {
    let dir = try workflow("for i = 1, 3 do operation { name = 'op' .. i, run = function() sleep(3) end } end")
    let session = try TerminalSession("clear && \(Binary.url.path) -j3 w.lua", in: dir, width: 80, height: 20)
    let done = session.wait(timeout: 30) { $0.contains("EXIT=") }
    #expect(done.contains("3 succeeded") && done.contains("EXIT=0"), "\(done)")
    let history =
      Int(
        try session.tmux(["display", "-p", "-t", session.name, "#{history_size}"])
          .trimmingCharacters(in: .whitespacesAndNewlines)) ?? -1
    #expect(history == 0, "about 45 frames were drawn, none went into the scrollback: \(history) lines there")
  }

  /// `--events -` on the terminal the live view is on: the events' lines scroll above the
  /// region, and the region is drawn once, below them.
  @Test(.enabled(if: hasTmux)) func eventsOnTheSameTerminalGoAboveTheRegion() throws {
    let dir = try workflow("for i = 1, 2 do operation { name = 'op' .. i, run = function() sleep(4) end } end")
    let session = try TerminalSession("\(Binary.url.path) -j2 --events - w.lua", in: dir, width: 120, height: 40)
    var looked = 0
    let deadline = Date().addingTimeInterval(20)
    while Date() < deadline {
      let screen = session.screen
      if screen.contains("EXIT=") { break }
      if overallLines(screen) > 0 {  // not between an event's line and the next frame
        looked += 1
        #expect(overallLines(screen) == 1, "one region, not a copy per event: \(screen)")
        let lines = screen.split(separator: "\n")
        if let bar = lines.firstIndex(where: { $0.range(of: #"\d+%  \d+ done"#, options: .regularExpression) != nil }) {
          #expect(
            !lines[bar...].contains { $0.contains("\"event\"") }, "no event is written into the region: \(screen)")
        }
      }
      usleep(100_000)
    }
    #expect(looked >= 3, "the screen was looked at while the run went on")
    let done = session.wait { $0.contains("EXIT=") }
    #expect(done.contains(#""event":"run_finish""#) && done.contains("EXIT=0"), "\(done)")
    #expect(overallLines(done) == 0, "no region left behind: \(done)")
  }

  /// Below 20 columns each line is still cut to the width: a line that wrapped would take two
  /// rows, and the next frame, clearing one a line, would leave the other behind.
  @Test(.enabled(if: hasTmux)) func aTerminalNarrowerThanTwentyColumnsKeepsOneRowALine() throws {
    let dir = try workflow("operation { name = 'a-rather-long-operation-name', run = function() sleep(8) end }")
    let session = try TerminalSession("\(Binary.url.path) w.lua", in: dir, width: 15, height: 10)
    for width in [15, 12, 8] {
      try session.tmux(["resize-window", "-t", session.name, "-x", "\(width)", "-y", "10"])
      func settled(_ screen: String) -> Bool {
        let lines = screen.split(separator: "\n")
        return lines.count == 2 && lines.allSatisfy { TerminalSession.columns($0) < width } && screen.contains("[")
      }
      // A frame at the new width comes within a fifteenth of a second; under load, later.
      let screen = session.wait(timeout: 5) { settled($0) || $0.contains("EXIT=") }
      guard !screen.contains("EXIT=") else { break }
      #expect(settled(screen), "the bar and one row, nothing stale, none wider than \(width) columns: \(screen)")
      usleep(300_000)  // more frames at this width leave nothing behind either
      #expect(settled(session.screen) || session.screen.contains("EXIT="), "\(session.screen)")
    }
    let done = session.wait { $0.contains("EXIT=") }
    #expect(done.contains("EXIT=0"), "\(done)")
  }

  /// A paused file progress says "paused" once: its words already say it.
  @Test(.enabled(if: hasTmux)) func aPausedFileRowSaysPausedOnce() throws {
    let dir = try workflow(
      """
      operation { name = "files", run = function()
        local p = progress { kind = "file" }
        p:pause()
        sleep(2.5)
      end }
      operation { name = "counted", run = function()
        local p = progress { total = 4 }
        p.completed = 1
        p:pause()
        sleep(2.5)
      end }
      """)
    let session = try TerminalSession("\(Binary.url.path) -j2 w.lua", in: dir, width: 100)
    func row(_ name: String, _ screen: String) -> Substring? {
      screen.split(separator: "\n").first { $0.contains(" \(name) ") }
    }
    let screen = session.wait {
      row("files", $0)?.contains("paused") == true && row("counted", $0)?.contains("paused") == true
    }
    let rows = screen.split(separator: "\n")
    let files = try #require(rows.first { $0.contains(" files ") }, "\(screen)")
    #expect(files.components(separatedBy: "paused").count == 2, "once: \(files)")
    let counted = try #require(rows.first { $0.contains(" counted ") }, "\(screen)")
    #expect(counted.contains("1 of 4  paused"), "a progress whose words do not say it gets the tag: \(counted)")
    session.wait { $0.contains("EXIT=") }
  }
}
