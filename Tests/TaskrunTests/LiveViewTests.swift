// The live view agrees with what happened, looked at several times during a run in tmux:
// counts, wide names, more operations than rows, Ctrl-C, descriptions, io.write, prompts.
import Foundation
import TestSupport
import Testing

extension TerminalSession {
  /// Columns a screen line takes (wide characters count two).
  static func columns(_ line: Substring) -> Int {
    line.unicodeScalars.reduce(0) { total, scalar in
      total
        + ((0x1100...0x115F).contains(scalar.value) || (0x2E80...0xA4CF).contains(scalar.value)
          || (0xAC00...0xD7A3).contains(scalar.value) || (0xFF00...0xFF60).contains(scalar.value) ? 2 : 1)
    }
  }

  func resize(width: Int, height: Int) throws {
    try tmux(["resize-window", "-t", name, "-x", "\(width)", "-y", "\(height)"])
  }
}

@Suite(.serialized) struct LiveViewTests {
  static let hasTmux = TerminalTests.hasTmux

  func workflow(_ text: String) throws -> URL { try TerminalTests().workflow(text) }

  /// "N done" of the overall line, and how many "ok" lines are above it.
  func counts(_ screen: String) -> (done: Int, ok: Int)? {
    guard let match = screen.range(of: #"(\d+) done"#, options: .regularExpression) else { return nil }
    let done = Int(screen[match].split(separator: " ")[0]) ?? -1
    let ok = screen.split(separator: "\n").filter { $0.hasPrefix("ok ") }.count
    return (done, ok)
  }

  @Test(.enabled(if: hasTmux)) func countsNeverLagTheLinesAboveAndWideNamesDoNotWrap() throws {
    let dir = try workflow(
      """
      for i = 1, 8 do operation { name = string.format("step %02d", i), run = function() sleep(0.25 * i) end } end
      operation { name = "下载文件数据同步任务一二三四五六七八九十下载文件数据同步任务", run = function() sleep(2.5) end }
      """)
    let session = try TerminalSession("\(Binary.url.path) -j9 w.lua", in: dir, width: 60, height: 30)
    var looked = 0
    let deadline = Date().addingTimeInterval(10)
    while Date() < deadline {
      let screen = session.screen
      if screen.contains("EXIT=") { break }
      if let (done, ok) = counts(screen), ok > 0 {
        looked += 1
        #expect(done >= ok, "the bar says \(done) done under \(ok) ok lines:\n\(screen)")
      }
      // Its running row (the finished line and the summary's lines come when it has ended,
      // and a look may fall between them and the shell's EXIT=).
      let ended = ["ok ", "Slowest:", "Critical path:"]
      for line in screen.split(separator: "\n") where line.contains("下载") && !ended.contains(where: line.hasPrefix) {
        #expect(TerminalSession.columns(line) < 60 && line.contains("…"), "cut by display width: \(line)")
        #expect(
          line.range(of: #"\d\.\ds$"#, options: .regularExpression) != nil,
          "its elapsed time is on the same row: \(line)")
      }
      usleep(30_000)
    }
    #expect(looked >= 3, "the screen was looked at while operations finished")
  }

  @Test(.enabled(if: hasTmux)) func moreOperationsThanRowsKeepTheOverallLineOnScreen() throws {
    let dir = try workflow("for i = 1, 20 do operation { name = \"op \" .. i, run = function() sleep(6) end } end")
    let session = try TerminalSession("\(Binary.url.path) -j20 w.lua", in: dir, width: 80, height: 10)
    let live = session.wait { $0.contains("more running") }
    #expect(live.contains("… and 13 more running"), "9 rows: the bar, 7 operations, the rest counted: \(live)")
    #expect(live.range(of: #"\d+%  0 done  20 running"#, options: .regularExpression) != nil, "\(live)")
    try session.resize(width: 50, height: 6)
    let small = session.wait { $0.contains("… and 17 more running") }
    #expect(small.contains("20 running"), "after a resize the bar is still there: \(small)")
    #expect(small.split(separator: "\n").allSatisfy { TerminalSession.columns($0) < 50 }, "\(small)")
  }

  @Test(.enabled(if: hasTmux)) func rowsShowDescriptionsAndPausedAndIoWriteGoesAbove() throws {
    let dir = try workflow(
      """
      operation { name = "files", run = function()
        local p = progress { total = 4, description = "Downloading" }
        p.completed = 2
        p.additional_description = "2 of 4 files"
        sleep(0.8)
        p:pause()
        sleep(2)
      end }
      operation { name = "writer", run = function()
        io.write("written ", "by io.write\\n", "and a partial line")
        io.stdout:write(" finished\\n")
        sleep(2.5)
      end }
      """)
    let session = try TerminalSession("\(Binary.url.path) -j2 w.lua", in: dir, width: 100)
    let described = session.wait { $0.contains("Downloading — 2 of 4 files") }
    #expect(described.contains("Downloading — 2 of 4 files"), "\(described)")
    #expect(
      described.contains("written by io.write\nand a partial line finished\n"),
      "io.write lands above the region: \(described)")
    let paused = session.wait { $0.contains("paused") }
    #expect(
      paused.range(of: #"files \[[█░]+\] 50%  Downloading — 2 of 4 files  paused"#, options: .regularExpression) != nil,
      "\(paused)")
    let done = session.wait { $0.contains("EXIT=") }
    #expect(done.contains("written by io.write") && done.contains("EXIT=0"), "\(done)")
  }

  @Test(.enabled(if: hasTmux)) func ctrlCShowsStoppingAndTheCancelledCount() throws {
    let dir = try workflow(
      """
      for i = 1, 3 do operation { name = "slow " .. i, sh = "sleep 30" } end
      operation { name = "stubborn", observers = { background(2) }, run = function() sleep(1.5) end }
      """)
    let session = try TerminalSession("\(Binary.url.path) -j4 w.lua", in: dir)
    session.wait { $0.contains("4 running") }
    try session.send("C-c")
    let stopping = session.wait { $0.contains("stopping…") && $0.contains("3 cancelled") }
    #expect(
      stopping.range(of: #"stopping…  0 done  3 cancelled  1 running"#, options: .regularExpression) != nil,
      "cancelled operations are not counted as failed, nothing pends: \(stopping)")
    #expect(!stopping.contains("failed"), "\(stopping)")
    let done = session.wait { $0.contains("EXIT=") }
    #expect(done.contains("EXIT=130"), "\(done)")
  }

  @Test(.enabled(if: hasTmux)) func underWatchTheViewSaysTheCycleAndWhatStartedIt() throws {
    let dir = try workflow(
      """
      operation { name = "slow", sh = "sleep 30", inputs = { "in.txt" } }
      """)
    try "1".write(to: dir.appendingPathComponent("in.txt"), atomically: false, encoding: .utf8)
    let session = try TerminalSession("\(Binary.url.path) -w w.lua", in: dir)
    let first = session.wait { $0.contains("cycle 1") && $0.contains("1 running") }
    #expect(first.contains("cycle 1"), "\(first)")
    try "2".write(to: dir.appendingPathComponent("in.txt"), atomically: false, encoding: .utf8)
    let second = session.wait(timeout: 30) { $0.contains("cycle 2 · in.txt") && $0.contains("1 running") }
    #expect(second.contains("taskrun: cycle 2: in.txt changed"), "\(second)")
    #expect(second.contains("cancelled slow: its input in.txt changed"), "\(second)")
    try session.send("C-c")
    let done = session.wait { $0.contains("EXIT=") }
    #expect(done.contains("EXIT=130"), "\(done)")
  }

  @Test(.enabled(if: hasTmux)) func aQuestionIsAskedAloneAndCtrlCEndsItsLine() throws {
    let dir = try workflow(
      """
      operation { name = "chatty", run = function() for i = 1, 20 do print("chatter " .. i) sleep(0.1) end end }
      operation { name = "deploy", conditions = { confirm "Deploy?" }, sh = "true" }
      """)
    let session = try TerminalSession("\(Binary.url.path) -j2 w.lua", in: dir)
    let asked = session.wait { $0.contains("Deploy? [y/N]") }
    usleep(600_000)
    let later = session.screen
    #expect(
      later.hasSuffix("Deploy? [y/N]") || later.split(separator: "\n").last?.hasPrefix("Deploy? [y/N]") == true,
      "nothing is printed after the question while it waits: \(later)")
    #expect(
      later.components(separatedBy: "chatter").count == asked.components(separatedBy: "chatter").count, "\(later)")
    try session.send("C-c")
    let done = session.wait { $0.contains("EXIT=") }
    #expect(done.range(of: #"Deploy\? \[y/N\] (\^C)?\n"#, options: .regularExpression) != nil, "its line ends: \(done)")
    #expect(done.contains("EXIT=130"))
  }
}

extension LiveViewTests {
  @Test(.enabled(if: hasTmux)) func eachRunInTheReplStartsFromZero() throws {
    let dir = try workflow("")
    let session = try TerminalSession("\(Binary.url.path) repl", in: dir)
    session.wait { $0.contains("> ") }
    try session.send(#"operation { name = "first", run = function() sleep(1.2) end }; run()"#)
    try session.send("Enter")
    session.wait(timeout: 10) { $0.contains("ok        first") }
    try session.send(#"operation { name = "second", run = function() sleep(2) end }; run()"#)
    try session.send("Enter")
    let second = session.wait { $0.contains("second") && $0.contains("running") }
    #expect(
      second.range(of: #"0 done  1 running  0 pending  0:0[01] elapsed"#, options: .regularExpression) != nil,
      "the second run's counts and clock start from zero: \(second)")
    try session.send(":quit")
    try session.send("Enter")
  }

  @Test func taskbarProgressIsSentWhereTheTerminalShowsIt() throws {
    let dir = try workflow("for i = 1, 3 do operation { name = \"s\" .. i, sh = \"sleep 0.3\" } end")
    func run(_ environment: [String: String]) throws -> String {
      Binary.finish(try Binary.start(["--progress", "tty", "-j1", "w.lua"], in: dir, environment: environment)).stdout
    }
    let forced = try run(["TASKRUN_TASKBAR_PROGRESS": "1"])
    #expect(
      forced.contains("\u{1B}]9;4;1;33\u{07}") || forced.contains("\u{1B}]9;4;1;66\u{07}"), "\(forced.debugDescription)"
    )
    #expect(forced.hasSuffix("\u{1B}]9;4;0;0\u{07}") || forced.contains("\u{1B}]9;4;0;0\u{07}"), "cleared at the end")
    #expect(!(try run(["TASKRUN_TASKBAR_PROGRESS": "0", "WT_SESSION": "1"])).contains("\u{1B}]9;4;"))
    if ProcessInfo.processInfo.environment["TMUX"] == nil && ProcessInfo.processInfo.environment["STY"] == nil {
      #expect(
        (try run(["WT_SESSION": "1", "TERM": "xterm-256color"])).contains("\u{1B}]9;4;"), "Windows Terminal shows it")
      #expect(!(try run(["TERM": "xterm-256color"])).contains("\u{1B}]9;4;"), "an unknown terminal does not get it")
      #expect(
        !(try run(["WT_SESSION": "1", "TERM": "screen-256color"])).contains("\u{1B}]9;4;"), "nor does one inside screen"
      )
    }
  }
}

extension LiveViewTests {
  /// A frame (clearing the region and drawing it) costs far more than a line: many short
  /// operations get a frame per tick (15 a second), not one each, and every line still shows.
  @Test func aBurstOfShortOperationsIsDrawnAtTheFrameRateWithEveryLine() throws {
    let dir = try workflow("for i = 1, 3000 do operation { name = 'n' .. i, run = function() end } end")
    let started = Date()
    let run = Binary.finish(try Binary.start(["--progress", "tty", "-j2", "w.lua"], in: dir))
    let seconds = Date().timeIntervalSince(started)
    #expect(run.status == 0, "\(run.stderr)")
    let frames = run.stdout.components(separatedBy: "\u{1B}[J").count - 1
    #expect(frames <= Int(seconds * 15) + 3, "\(frames) frames in \(seconds) s")
    let ok = Set(
      run.stdout.split(separator: "\n").compactMap { line in
        line.range(of: #"ok +n\d+ \(\d+\.\d\d s\)"#, options: .regularExpression).map {
          String(line[$0].split(separator: " ")[1])
        }
      })
    #expect(ok.count == 3000, "\(ok.count) of 3000 lines")
    #expect(run.stdout.contains("3000 succeeded"))
  }

  /// The counts move with the lines above, the fraction with the scheduler's tick: a run
  /// shorter than a tick never shows its counts at the end beside the fraction at its start.
  @Test func noFrameShowsARunOverWithItsBarBehind() throws {
    let dir = try workflow("for i = 1, 3000 do operation { name = 'n' .. i, run = function() end } end")
    let (status, screen) = try Self.onTerminal(["--progress", "tty", "-j2", "w.lua"], in: dir)
    #expect(status == 0)
    let overall = try Regex(#"(\d+)%  (\d+) done  (\d+) running  (\d+) pending"#)
    var frames = 0
    for match in screen.matches(of: overall) {
      frames += 1
      let (percent, running, pending) = (
        Int(match.output[1].substring!)!, match.output[3].substring!, match.output[4].substring!
      )
      #expect(running != "0" || pending != "0" || percent == 100, "\(screen[match.range])")
    }
    #expect(frames >= 1, "the region was drawn: \(screen.suffix(500).debugDescription)")
  }

  @Test(.enabled(if: hasTmux)) func aJobWaitingInTheClusterShowsAsQueued() throws {
    let marker = Scratch.root.appendingPathComponent("taskrun-cancelled-\(UUID().uuidString)").path
    let (dir, environment) = try FakeSlurmTests().fake([
      "sbatch": "echo 55", "squeue": "[ -f \(marker) ] && echo '55|CANCELLED|None|' || echo '55|PENDING|Resources|'",
      "scancel": "touch \(marker)", "srun": "exit 1"
    ])
    try #"operation { name = "big", queue = queue { name = "hpc", executor = "slurm" }, timeout = 3, sh = "true" }"#
      .write(to: dir.appendingPathComponent("w.lua"), atomically: true, encoding: .utf8)
    let session = try TerminalSession(
      "PATH=\(environment["PATH"]!) TASKRUN_SLURM_POLL=0.1 \(Binary.url.path) w.lua", in: dir)
    let queued = session.wait { $0.contains("queued on slurm (Resources)") }
    #expect(queued.contains("⧗ big  queued on slurm (Resources)"), "\(queued)")
    let done = session.wait { $0.contains("EXIT=") }
    #expect(done.contains("timed out after 3 s") && done.contains("EXIT=1"), "\(done)")
  }
}

extension LiveViewTests {
  /// On a terminal the lines above the region end in CR and IND (ESC D) rather than in a
  /// newline, which the kernel turns into CR LF one line at a time; a line longer than the
  /// frame's buffer still arrives whole. (Elsewhere `--progress tty` keeps "\n": see above.)
  @Test func onATerminalLinesEndInCarriageReturnAndIndex() throws {
    let dir = try workflow(
      """
      for i = 1, 2000 do operation { name = 'n' .. i, run = function() end } end
      operation { name = "long", after = { "n2000" }, run = function() print(string.rep("x", 100000)) end }
      """)
    let (status, text) = try Self.onTerminal(["--progress", "tty", "-j2", "w.lua"], in: dir)
    #expect(status == 0)
    let ends = text.components(separatedBy: "\r\u{1B}D").count - 1
    #expect(ends >= 2001 && text.contains("n2000 (") && text.contains("2001 succeeded"), "\(ends) line ends")
    #expect(!text.contains(" s)\r\n"), "no finished line ends in a newline")
    #expect(
      text.contains(String(repeating: "x", count: 100_000) + "\r\u{1B}D"),
      "the long line is whole (\(text.count) characters)")
  }

  /// Runs taskrun on an 80×24 pseudo-terminal and returns its exit status and all it wrote there.
  static func onTerminal(_ arguments: [String], in dir: URL) throws -> (Int32?, String) {
    var master: Int32 = -1, device: Int32 = -1
    var name = [CChar](repeating: 0, count: 128)
    var size = winsize(ws_row: 24, ws_col: 80, ws_xpixel: 0, ws_ypixel: 0)
    try #require(openpty(&master, &device, &name, nil, &size) == 0)
    let controller = master
    defer { close(controller) }
    final class Screen: @unchecked Sendable { var bytes: [UInt8] = [] }
    let screen = Screen(), drained = DispatchSemaphore(value: 0)
    Thread.detachNewThread {
      var chunk = [UInt8](repeating: 0, count: 65536)
      while true {
        let n = read(controller, &chunk, chunk.count)
        if n <= 0 { break }  // EIO once the program that held the terminal has ended
        screen.bytes += chunk[..<n]
      }
      drained.signal()
    }
    let child = try Child(
      [Binary.url.path] + arguments, in: dir,
      stdout: String(decoding: name.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self))
    let status = child.wait(timeout: 60)
    if status == nil { kill(child.pid, SIGKILL); _ = child.wait() }
    close(device)  // reads end (EIO) once what the program wrote is read
    #expect(drained.wait(timeout: .now() + 10) == .success)
    return (status, String(decoding: screen.bytes, as: UTF8.self))
  }
}
