// The REPL's run() on a terminal: every run shows the live view; Ctrl-C makes run return false and the summary, leaving nothing behind.
import Foundation
import TestSupport
import Testing

@Suite(.serialized) struct ReplRunTests {
  func repl() throws -> (TerminalSession, pid_t) {
    let session = try TerminalSession("\(Binary.url.path) repl", in: Scratch.root)
    session.wait { $0.contains("\n>") }
    let shell = try #require(session.shellPID)
    let pid = try #require(
      pid_t(
        Child.output(["pgrep", "-P", "\(shell)", "-f", "taskrun repl"]).stdout
          .split(separator: "\n").first ?? ""))
    return (session, pid)
  }

  func enter(_ session: TerminalSession, _ line: String) throws {
    try session.send(line)
    try session.send("Enter")
  }

  /// The live view of a later run() shows from its start: its clock starts at 0 again, and
  /// the view once waited until it passed the previous run's length (6 s here).
  @Test(.enabled(if: TerminalTests.hasTmux)) func everyRunShowsTheLiveView() throws {
    let (session, _) = try repl()
    try enter(session, #"first = operation { name = "first", sh = "sleep 6" }"#)
    try enter(session, "run(first)")
    session.wait(timeout: 60) {
      $0.contains("ok        first") && $0.trimmingCharacters(in: .whitespacesAndNewlines).hasSuffix("true\n>")
    }
    try enter(session, #"second = operation { name = "second", sh = "sleep 30" }"#)
    try enter(session, "run(second)")
    let row = #"second +(\d+\.\d)s"#
    let live = session.wait(timeout: 30) { $0.range(of: row, options: .regularExpression) != nil }
    let shown = live.range(of: row, options: .regularExpression).map { live[$0] } ?? ""
    let seconds = Double(shown.split(separator: " ").last?.dropLast() ?? "") ?? 99
    #expect(seconds < 5, "the second run's row appears before its time passes the first run's: \(live)")
    try session.send("C-c")
    session.wait { $0.contains("false") }
  }

  /// Ctrl-C in run() cancels the graph; run returns false and the summary once the commands
  /// have ended (reaped: no zombie until the next run). In sleep and sh it raises
  /// `stdin:1: interrupted`, the user's line, without a traceback.
  @Test(.enabled(if: TerminalTests.hasTmux)) func ctrlCInRunReturnsFalseAndTheSummary() throws {
    let (session, pid) = try repl()
    try enter(session, #"slow = operation { name = "slow", sh = "sleep 30" }"#)
    try enter(session, #"after_slow = operation { name = "after_slow", after = { slow }, sh = "true" }"#)
    try enter(session, "run(after_slow)")
    session.wait { $0.contains("1 running") }
    try session.send("C-c")
    let back = session.wait {
      $0.range(
        of: #"false\s+slow cancelled: interrupted\nafter_slow cancelled: interrupted\n>"#,
        options: .regularExpression) != nil
    }
    #expect(
      back.range(
        of: #"false\s+slow cancelled: interrupted\nafter_slow cancelled: interrupted\n>"#,
        options: .regularExpression) != nil, "\(back)")
    #expect(!back.contains("[taskrun]") && !back.contains("traceback"), "\(back)")
    let children = try Child.output(["ps", "-o", "pid=,stat=,comm=", "--ppid", "\(pid)"]).stdout
    #expect(children.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty, "nothing left behind: \(children)")
    for line in ["sleep(30)", #"sh("sleep 30")"#] {
      try enter(session, line)
      session.wait { $0.trimmingCharacters(in: .whitespacesAndNewlines).hasSuffix(line) }
      usleep(300_000)
      try session.send("C-c")
      let raised = session.wait {
        $0.contains("\(line)\n^Cstdin:1: interrupted\n>") || $0.contains("\(line)^Cstdin:1: interrupted")
      }
      #expect(raised.contains("stdin:1: interrupted") && !raised.contains("[taskrun]"), "\(line): \(raised)")
    }
    try enter(session, #"quick = operation { name = "quick", run = function() return 7 end }"#)
    try enter(session, "run(quick), quick.result")
    let after = session.wait { $0.range(of: #"\ntrue\s+7\n"#, options: .regularExpression) != nil }
    #expect(after.range(of: #"\ntrue\s+7\n"#, options: .regularExpression) != nil, "the REPL goes on: \(after)")
  }
}
