// Ctrl-C in the REPL while Lua is blocked in a read: an io.popen pipe, io.read() of the terminal.
import Foundation
import TestSupport
import Testing

@Suite struct ReplInterruptTests {
  /// A folder for the pid file of the command the REPL starts.
  func folder() throws -> URL {
    let dir = Scratch.root.appendingPathComponent("taskrun-replint-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
    return dir
  }

  /// Whether `pid` still runs (a zombie, exited but not yet reaped, does not).
  func running(_ pid: pid_t) -> Bool {
    guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
      let close = stat.lastIndex(of: ")")
    else { return false }
    return !stat[stat.index(close, offsetBy: 2)...].hasPrefix("Z")
  }

  /// The pid the command wrote, once it has.
  func commandPID(in dir: URL) -> pid_t? {
    let deadline = Date().addingTimeInterval(15)
    while Date() < deadline {
      if let text = try? String(contentsOf: dir.appendingPathComponent("pid"), encoding: .utf8),
        let pid = pid_t(text.trimmingCharacters(in: .whitespacesAndNewlines))
      {
        return pid
      }
      usleep(50_000)
    }
    return nil
  }

  /// The REPL never woke Lua from a blocking read (only a run did): Ctrl-C was ignored until
  /// the command ended 60 s later, and the handle's close at the next collection waited too.
  @Test(.enabled(if: TerminalTests.hasTmux)) func ctrlCStopsAnIoPopenReadAndItsCommand() throws {
    let dir = try folder()
    let session = try TerminalSession("\(Binary.url.path) repl", in: dir)
    session.wait { $0.contains("\n>") }
    try session.send(#"io.popen("echo $$ > pid; exec sleep 60"):read("a")"#)
    try session.send("Enter")
    let pid = try #require(commandPID(in: dir))
    defer { if running(pid) { kill(pid, SIGKILL) } }
    try session.send("C-c")
    let stopped = session.wait { $0.contains("stdin:1: interrupted\n>") }
    #expect(stopped.contains("stdin:1: interrupted\n>"), "raised at the line, back at the prompt: \(stopped)")
    let deadline = Date().addingTimeInterval(15)
    while running(pid) && Date() < deadline { usleep(50_000) }
    #expect(!running(pid), "the command got SIGTERM")
    try session.send("collectgarbage() + 42")  // closes the handle (0 + 42): no wait for the command
    try session.send("Enter")
    let after = session.wait(timeout: 30) { $0.contains("\n42\n>") }
    #expect(after.contains("\n42\n>"), "\(after)")
  }

  /// io.read() blocked on the terminal: Ctrl-C did nothing, and the next typed line ended
  /// the read (swallowed) before the interrupt was raised.
  @Test(.enabled(if: TerminalTests.hasTmux)) func ctrlCStopsIoReadAndTheNextLineIsEvaluated() throws {
    let session = try TerminalSession("\(Binary.url.path) repl", in: Binary.workflows)
    session.wait { $0.contains("\n>") }
    try session.send("x = io.read()")
    try session.send("Enter")
    session.wait { $0.contains("x = io.read()\n") }
    usleep(300_000)  // the read has begun
    try session.send("C-c")
    let stopped = session.wait { $0.contains("stdin:1: interrupted\n>") }
    #expect(stopped.contains("stdin:1: interrupted\n>"), "\(stopped)")
    try session.send(#""next line", x"#)
    try session.send("Enter")
    let shown = #"\nnext line\s+nil\n>"#
    let after = session.wait { $0.range(of: shown, options: .regularExpression) != nil }
    #expect(after.range(of: shown, options: .regularExpression) != nil, "the line is evaluated, not read: \(after)")
  }

  /// An operation whose body returns what it reads from a pipe: the woken read returned nil
  /// straight out of the body (a tail call, no instruction for the hook), so the operation
  /// succeeded ('ok') and the evaluation raised instead of run returning false. Its command
  /// must end with the body: a collection after the interrupt closed the handle and waited
  /// for the command.
  @Test(.enabled(if: TerminalTests.hasTmux)) func ctrlCInRunCancelsABodyReadingAPipe() throws {
    let dir = try folder()
    let session = try TerminalSession("\(Binary.url.path) repl", in: dir)
    session.wait { $0.contains("\n>") }
    try session.send(
      #"op = operation { name = "reader", run = function() return io.popen("echo $$ > pid; exec sleep 60"):read("a") end }"#
    )
    try session.send("Enter")
    try session.send("run(op), collectgarbage()")  // the handle is collected after the interrupt is over
    try session.send("Enter")
    let pid = try #require(commandPID(in: dir))
    defer { if running(pid) { kill(pid, SIGKILL) } }
    try session.send("C-c")
    let shown = #"\nfalse\s+0\n>"#  // run's first value, then the collection's
    let after = session.wait { $0.range(of: shown, options: .regularExpression) != nil }
    #expect(after.range(of: shown, options: .regularExpression) != nil, "run returns false and the summary: \(after)")
    #expect(after.contains("cancelled reader: interrupted"), "\(after)")
    #expect(!after.contains("ok        reader") && !after.contains("stdin:1: interrupted"), "\(after)")
    let deadline = Date().addingTimeInterval(15)
    while running(pid) && Date() < deadline { usleep(50_000) }
    #expect(!running(pid), "the command got SIGTERM")
  }
}
