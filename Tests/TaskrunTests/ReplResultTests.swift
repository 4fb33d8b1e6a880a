// The REPL showing what an expression returned: every value, and no crash however many.
import Foundation
import TestSupport
import Testing

@Suite struct ReplResultTests {
  /// What is typed, and what the screen must show for it (a pattern: tmux turns tabs to spaces).
  static let expressions: [(String, String)] = [
    ("1 + 41", #"\n42\n"#),
    (#""text", 2, nil"#, #"\ntext\s+2\s+nil\n"#),
    (#"{ 1, 2, name = "x", nested = { 3 } }"#, #"\n\{ 1, 2, name = "x", nested = \{ 3 \} \}\n"#),
    (#"setmetatable({}, { __tostring = function() return "custom" end }), "after""#, #"\ncustom\s+after\n"#),
    (#"setmetatable({ 1 }, { __name = "Thing" })"#, #"\nThing: 0x[0-9a-f]+\n"#),
    ("select(2, 10, 20, 30)", #"\n20\s+30\n"#)
  ]

  /// The ended coroutine's thread was let go before its results were read: the first
  /// collection freed it, and the REPL showed garbage or crashed (SIGSEGV in about half the
  /// fresh sessions on a terminal). Each session here is fresh, as that crash wanted.
  @Test(.enabled(if: TerminalTests.hasTmux)) func freshSessionsShowEveryValueAndNeverCrash() throws {
    for round in 1...12 {
      let session = try TerminalSession("\(Binary.url.path) repl", in: Binary.workflows)
      session.wait { $0.contains("\n>") }
      for (typed, shown) in Self.expressions {  // each after the last one's value: no typing ahead
        try session.send(typed)
        try session.send("Enter")
        let screen = session.wait(timeout: 30) {
          $0.range(of: shown, options: .regularExpression) != nil || $0.contains("EXIT=")
        }
        guard screen.range(of: shown, options: .regularExpression) != nil else {
          Issue.record("round \(round): \(typed) shows its value: \(screen)")
          return  // one wrong value or crash says it; the rest would repeat it
        }
        try session.send("C-l")  // a clear screen for the next value
        session.wait { !$0.contains(typed) }
      }
      try session.send("C-d")
      let end = session.wait { $0.contains("EXIT=") }
      #expect(end.contains("EXIT=0"), "round \(round): the REPL must not crash: \(end)")
      if !end.contains("EXIT=0") { return }  // one crash says it; the others would repeat it
    }
  }

  /// More results than a new Lua thread has room for: they were pushed past the end of two
  /// stacks (the ended coroutine's, the bounded call's), and the REPL showed nil from the 44th on.
  @Test func manyResultsAreAllShown() throws {
    let run = Binary.finish(
      try Binary.start(
        ["repl"],
        input: """
          t = {} for i = 1, 300 do t[i] = i end
          table.unpack(t)
          "still here"
          """))
    #expect(run.status == 0, "\(run.stderr)")
    let numbers = (1...300).map(String.init).joined(separator: "\t")
    #expect(run.stdout == numbers + "\nstill here\n", "\(run.stdout.suffix(300))")
  }
}
