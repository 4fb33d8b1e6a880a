// The live view, on a real terminal: tmux runs taskrun and we read its screen.
import Foundation
import TestSupport
import Testing

/// A tmux session running one command; `screen` is what a person would see.
final class TerminalSession {
  let name = "taskrun-\(UUID().uuidString.prefix(8))"

  init(_ command: String, in directory: URL, width: Int = 100, height: Int = 30) throws {
    try tmux([
      "new-session", "-d", "-s", name, "-x", "\(width)", "-y", "\(height)",
      "cd \(directory.path) && \(command); echo EXIT=$?; sleep 60"
    ])
  }

  deinit {
    _ = try? tmux(["kill-session", "-t", name])
    // The server has exited with its only session; its socket stays behind.
    let sockets = (ProcessInfo.processInfo.environment["TMUX_TMPDIR"] ?? "/tmp") + "/tmux-\(getuid())"
    try? FileManager.default.removeItem(atPath: sockets + "/" + name)
  }

  var screen: String { (try? tmux(["capture-pane", "-p", "-t", name])) ?? "" }
  var cursorVisible: Bool { (try? tmux(["display", "-p", "-t", name, "#{cursor_flag}"]))?.hasPrefix("1") ?? false }
  func send(_ keys: String) throws { try tmux(["send-keys", "-t", name, keys]) }
  /// The shell running in the pane (the command runs as its child).
  var shellPID: pid_t? {
    (try? tmux(["display", "-p", "-t", name, "#{pane_pid}"])).flatMap {
      pid_t($0.trimmingCharacters(in: .whitespacesAndNewlines))
    }
  }
  /// Closes the terminal, as closing a terminal window does.
  func close() { _ = try? tmux(["kill-session", "-t", name]) }

  /// Polls the screen until `condition` holds (or gives up after `timeout` seconds).
  @discardableResult
  func wait(timeout: Double = 15, until condition: (String) -> Bool) -> String {
    let deadline = Date().addingTimeInterval(timeout)
    var text = screen
    while !condition(text) && Date() < deadline {
      usleep(50_000)
      text = screen
    }
    return text
  }

  /// tmux on this session's own server (`-L`): a server shared by the tests running at the
  /// same time exits with its last session, and a session another test starts meanwhile fails.
  @discardableResult
  func tmux(_ arguments: [String]) throws -> String {
    // Output through a file: a tmux server started here would hold a pipe open forever.
    try Child.output(["tmux", "-L", name] + arguments).stdout
  }
}

@Suite(.serialized) struct TerminalTests {
  static let hasTmux = FileManager.default.isExecutableFile(atPath: "/usr/bin/tmux")

  func workflow(_ text: String) throws -> URL {
    let dir = Scratch.root.appendingPathComponent("taskrun-tty-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
    try text.write(to: dir.appendingPathComponent("w.lua"), atomically: true, encoding: .utf8)
    return dir
  }

  @Test(.enabled(if: hasTmux)) func liveRegionShowsRunningOperationsAndGivesWayToTheSummary() throws {
    let dir = try workflow(
      """
      operation { name = "quick", sh = "sleep 0.2" }
      operation { name = "slow-download", run = function() sleep(1) print("halfway there") sleep(1.5) end }
      operation { name = "compile", sh = "sleep 2" }
      operation { name = "package", after = { "quick" }, sh = "sleep 1.5" }
      """)
    let session = try TerminalSession("\(Binary.url.path) -j4 w.lua", in: dir)
    let live = session.wait { $0.contains("ok        quick") && $0.contains("running") }
    #expect(live.contains("ok        quick"), "finished operations scroll above: \(live)")
    #expect(
      live.range(of: #"\[[█░]+\] +\d+%  \d done  \d running  \d pending  0:0\d elapsed"#, options: .regularExpression)
        != nil, "\(live)")
    #expect(live.contains("slow-download") && live.contains("compile"), "\(live)")
    #expect(!live.contains("start "), "no start lines under the live view")
    #expect(!session.cursorVisible, "the cursor is hidden while the region is live")
    let done = session.wait { $0.contains("EXIT=") }
    #expect(done.contains("4 succeeded in"), "\(done)")
    #expect(done.contains("EXIT=0"))
    #expect(!done.contains("running"), "the live region is gone, none left behind: \(done)")
    #expect(done.contains("\nhalfway there\n"), "a script's print lands above the region: \(done)")
    #expect(session.cursorVisible)
  }

  @Test(.enabled(if: hasTmux)) func activitiesShowAsSpinnersWithTheirCount() throws {
    let dir = try workflow(
      """
      for i = 1, 2 do
        operation { name = "fetch" .. i, observers = { activity "network" }, run = function() sleep(1.5) end }
      end
      """)
    let session = try TerminalSession("\(Binary.url.path) -j4 w.lua", in: dir)
    let live = session.wait { $0.contains("network (2)") }
    #expect(live.contains("network (2)"), "\(live)")
    let done = session.wait { $0.contains("EXIT=") }
    #expect(!done.contains("network ("), "the indicator goes away with its operations: \(done)")
  }

  @Test(.enabled(if: hasTmux)) func confirmAsksOnTheTerminalWhileTheLiveViewStepsAside() throws {
    let dir = try workflow(
      """
      operation { name = "busy", run = function() sleep(1.5) end }
      operation { name = "deploy", conditions = { confirm "Deploy to production?" }, sh = "true" }
      operation { name = "wipe", conditions = { confirm "Wipe the cache?" }, sh = "true" }
      """)
    let session = try TerminalSession("\(Binary.url.path) -k -j4 w.lua", in: dir)
    let first = session.wait { $0.contains("[y/N]") }
    #expect(first.contains("?"), "\(first)")
    let deployFirst = first.contains("Deploy to production? [y/N]")
    try session.send(deployFirst ? "y" : "n")
    try session.send("Enter")
    let second = session.wait { $0.components(separatedBy: "[y/N]").count > 2 }
    #expect(
      second.contains(deployFirst ? "Wipe the cache? [y/N]" : "Deploy to production? [y/N]"),
      "the second question is visible, not drawn over: \(second)")
    try session.send(deployFirst ? "n" : "y")
    try session.send("Enter")
    let done = session.wait { $0.contains("EXIT=") }
    #expect(done.contains("ok        deploy"), "\(done)")
    #expect(done.contains("FAILED    wipe") && done.contains("\"Wipe the cache?\": declined"), "\(done)")
    #expect(done.contains("EXIT=1"))
  }

  @Test(.enabled(if: hasTmux)) func aQuestionWhoseOperationTheStopCancelledIsNotAsked() throws {
    let dir = try workflow(
      """
      operation { name = "bg", sh = "sleep 3" }
      operation { name = "deploy", conditions = { confirm "Deploy?" }, sh = "echo deployed" }
      operation { name = "other", conditions = { confirm "Other?" }, sh = "echo other" }
      """)
    let session = try TerminalSession("\(Binary.url.path) w.lua", in: dir)
    let first = session.wait { $0.contains("[y/N]") }
    let deployFirst = first.contains("Deploy? [y/N]")
    let (declined, cancelled) = deployFirst ? ("deploy", "other") : ("other", "deploy")
    try session.send("n")
    try session.send("Enter")
    // Without a second question the run ends by itself once `bg` has.
    let done = session.wait(timeout: 30) { $0.contains("EXIT=") || $0.components(separatedBy: "[y/N]").count > 2 }
    #expect(done.components(separatedBy: "[y/N]").count == 2, "only the first question is asked: \(done)")
    #expect(done.contains("FAILED    \(declined)") && done.contains("declined"), "\(done)")
    #expect(done.contains("cancelled \(cancelled): not started: the run stopped after '\(declined)' failed"), "\(done)")
    #expect(done.contains("EXIT=1"), "\(done)")
  }

  @Test(.enabled(if: hasTmux)) func ctrlCRestoresTheTerminal() throws {
    let dir = try workflow(
      """
      operation { name = "forever", run = function() sleep(60) end }
      operation { name = "spin", run = function() while true do end end }
      """)
    let session = try TerminalSession("\(Binary.url.path) -j2 w.lua", in: dir)
    session.wait { $0.contains("forever") && $0.contains("spin") }
    try session.send("C-c")
    let done = session.wait { $0.contains("EXIT=") }
    #expect(done.contains("EXIT=130"), "\(done)")
    #expect(done.contains("cancelled forever: interrupted"))
    #expect(session.cursorVisible)
  }

  @Test(.enabled(if: hasTmux)) func narrowTerminalsDoNotWrapTheRegion() throws {
    let dir = try workflow(
      """
      operation { name = "an-operation-with-a-rather-long-name-that-would-wrap", sh = "sleep 1.5" }
      """)
    let session = try TerminalSession("\(Binary.url.path) w.lua", in: dir, width: 40)
    let live = session.wait { $0.contains("an-operation") }
    let lines = live.split(separator: "\n").filter { !$0.isEmpty }
    #expect(lines.count == 2, "overall line and one operation line: \(live)")
    #expect(lines.allSatisfy { $0.count < 40 })
  }
}

extension TerminalTests {
  /// A bare `taskrun` on a terminal runs the script it finds, as make does; only where there
  /// is none does it open the REPL.
  @Test(.enabled(if: hasTmux)) func bareTaskrunRunsTheScriptItFindsElseTheRepl() throws {
    let dir = Scratch.root.appendingPathComponent("taskrun-bare-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: dir.appendingPathComponent("sub"), withIntermediateDirectories: true)
    try #"operation { name = "build", sh = "touch built" }"#.write(
      to: dir.appendingPathComponent("taskrun.lua"), atomically: true, encoding: .utf8)
    let found = try TerminalSession(Binary.url.path, in: dir.appendingPathComponent("sub"))
    let done = found.wait { $0.contains("EXIT=") }
    #expect(done.contains("EXIT=0") && !done.contains(":help"), "\(done)")
    #expect(FileManager.default.fileExists(atPath: dir.appendingPathComponent("built").path), "\(done)")
    let none = Scratch.root.appendingPathComponent("taskrun-bare-none-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: none, withIntermediateDirectories: true)
    let repl = try TerminalSession(Binary.url.path, in: none)
    let prompt = repl.wait { $0.contains(":help for the commands") && $0.contains("\n>") }
    #expect(prompt.contains(":help for the commands"), "\(prompt)")
    try repl.send("C-d")
    #expect(repl.wait { $0.contains("EXIT=") }.contains("EXIT=0"))
  }
}
