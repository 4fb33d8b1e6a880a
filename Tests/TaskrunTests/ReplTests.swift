// taskrun repl, driven through a pipe (no prompts) and on a real terminal (tmux).
import Foundation
import TestSupport
import Testing

@Suite struct ReplTests {
  func repl(_ input: String, _ arguments: [String] = []) throws -> Run {
    Binary.finish(try Binary.start(["repl"] + arguments, input: input))
  }

  @Test func expressionsShowTheirValuesAndStatementsContinueAcrossLines() throws {
    let run = try repl(
      """
      1 + 41
      "text", 2, nil
      { 1, 2, name = "x", nested = { deep = { deeper = { deepest = 1 } } } }
      function twice(x)
        return 2 * x
      end
      twice(21)
      =twice(4)
      """)
    #expect(run.status == 0)
    #expect(
      run.stdout == """
        42
        text\t2\tnil
        { 1, 2, name = "x", nested = { deep = { deeper = {…} } } }
        42
        8

        """)
  }

  @Test func operationsAreDeclaredRunAndInspected() throws {
    let run = try repl(
      """
      x = operation { name = "hello", run = function() return { greeting = "hi" } end }
      x
      run(x)
      x.result
      x
      :ops
      :why hello
      :why helo
      :graph
      """)
    #expect(run.stdout.contains("<operation hello: pending>\n"))
    #expect(run.stdout.contains("ok        hello ("))
    #expect(run.stdout.contains("true\n{ greeting = \"hi\" }\n<operation hello: finished, succeeded,"))
    #expect(run.stdout.contains("  hello: finished, succeeded,"))
    #expect(run.stdout.contains("'hello' succeeded\nno operation named 'helo'; did you mean 'hello'?\n  hello\n"))
  }

  @Test func errorsArePrintedAndTheSessionGoesOn() throws {
    let run = try repl(
      """
      error("boom")
      operation { nme = "x" }
      return 1 +
      2
      :nonsense
      "still here"
      :quit
      "not reached"
      """)
    #expect(run.status == 0)
    #expect(run.stderr.contains("stdin:1: boom"))
    #expect(run.stderr.contains("unknown field 'nme'; did you mean 'name'?"))
    #expect(run.stdout.contains("3\nunknown command ':nonsense'; :help lists them\nstill here\n"))
    #expect(!run.stdout.contains("not reached"))
  }

  @Test func aScriptsDeclarationsLoadWithoutRunning() throws {
    let run = try repl(
      """
      :ops
      run()
      :ops
      """, ["dry_run.lua"])
    #expect(run.stdout.hasPrefix("loaded dry_run.lua: 4 operations declared (run() runs them)\n  fetch: pending"))
    #expect(
      run.stderr.contains("FAILED    fetch"),
      "run() ran them (curl of example.org fails offline or succeeds: it started)")
  }

  @Test func loadCountsWhatTheFileDeclared() throws {
    let run = try repl(
      """
      typed = operation { name = "typed", run = function() end }
      :load dry_run.lua
      """)
    #expect(
      run.stdout.contains("loaded dry_run.lua: 4 operations declared (5 in all; run() runs them)\n"), "\(run.stdout)")
  }

  @Test(.enabled(if: TerminalTests.hasTmux)) func ctrlCCancelsTheRunningGraphAndTheReplSurvives() throws {
    let session = try TerminalSession("\(Binary.url.path) repl", in: Binary.workflows)
    session.wait { $0.contains("\n>") }
    try session.send(#"slow = operation { name = "slow", run = function() sleep(60) end }"#)
    try session.send("Enter")
    try session.send("run(slow)")
    try session.send("Enter")
    let running = session.wait { $0.contains("1 running") }
    #expect(running.contains("1 running"), "the live view shows the run: \(running)")
    try session.send("C-c")
    let back = session.wait { $0.contains("false") }
    #expect(back.contains("cancelled slow: interrupted"), "\(back)")
    try session.send("C-c")  // at the prompt: must not reach the next evaluation
    try session.send(#"quick = operation { name = "quick", run = function() return 7 end }"#)
    try session.send("Enter")
    try session.send("run(quick), quick.result")
    try session.send("Enter")
    let shown = #"\ntrue\s+7\n"#
    let after = session.wait { $0.range(of: shown, options: .regularExpression) != nil }
    #expect(after.range(of: shown, options: .regularExpression) != nil, "the REPL survived and runs again: \(after)")
    #expect(!after.contains("cancelled quick"), "the Ctrl-C at the prompt did not leak into the next run")
  }

  @Test(.enabled(if: TerminalTests.hasTmux)) func theReplEndsWhenItsTerminalCloses() throws {
    let session = try TerminalSession("\(Binary.url.path) repl", in: Binary.workflows)
    session.wait { $0.contains("\n>") }
    let shell = try #require(session.shellPID)
    let repl = try #require(
      pid_t(
        Child.output(["pgrep", "-P", "\(shell)", "-f", "taskrun repl"]).stdout
          .split(separator: "\n").first ?? ""))
    session.close()
    let deadline = Date().addingTimeInterval(5)
    while kill(repl, 0) == 0 && Date() < deadline { usleep(20_000) }
    #expect(kill(repl, 0) != 0, "the REPL must not outlive its terminal (it once spun at 100% CPU)")
    if kill(repl, 0) == 0 { kill(repl, SIGKILL) }
  }

  @Test(.enabled(if: TerminalTests.hasTmux)) func ctrlCAtThePromptDropsTheLineAndTheUnfinishedStatement() throws {
    let session = try TerminalSession("\(Binary.url.path) repl", in: Binary.workflows)
    session.wait { $0.contains("\n>") }
    try session.send("undefined_thing(")
    session.wait { $0.contains("undefined_thing(") }
    try session.send("C-c")
    let dropped = session.wait { $0.contains("undefined_thing(^C\n>") }  // tmux trims trailing spaces
    #expect(
      dropped.contains("> undefined_thing(^C\n>"), "the line is shown as abandoned and a new prompt follows: \(dropped)"
    )
    try session.send("for i = 1, 3 do")
    try session.send("Enter")
    session.wait { $0.contains(">>") }
    try session.send("C-c")
    session.wait { $0.contains(">> ^C\n>") }
    try session.send("x = 'é'; print(1 + 41, x)")
    try session.send("Enter")
    let shown = #"\n42\s+é\n>"#  // the next prompt too: Ctrl-D follows
    let after = session.wait { $0.range(of: shown, options: .regularExpression) != nil }
    #expect(
      after.range(of: shown, options: .regularExpression) != nil, "nothing typed before Ctrl-C is evaluated: \(after)")
    #expect(!after.contains("attempt to call") && !after.contains("unexpected symbol"), "\(after)")
    try session.send("C-d")
    #expect(session.wait { $0.contains("EXIT=0") }.contains("EXIT=0"), "Ctrl-D still leaves")
  }

  @Test(.enabled(if: TerminalTests.hasTmux)) func tabCompletesFieldsAndMethodsAndHistoryIsKept() throws {
    let state = Scratch.root.appendingPathComponent("taskrun-state-\(UUID().uuidString)")
    let command = "XDG_STATE_HOME=\(state.path) \(Binary.url.path) repl"
    do {
      let session = try TerminalSession(command, in: Binary.workflows)
      session.wait { $0.contains("\n>") }
      try session.send(#"fetch = operation { name = "fetch", run = function() return 42 end }"#)
      try session.send("Enter")
      try session.send("main_queue:susp")
      try session.send("Tab")
      let method = session.wait { $0.contains("main_queue:suspend") }
      #expect(method.contains("main_queue:suspend"), "\(method)")
      try session.send("C-u")
      try session.send("run(fetch), fet")
      try session.send("Tab")
      session.wait { $0.contains("run(fetch), fetch") }
      try session.send(".resu")
      try session.send("Tab")
      session.wait { $0.contains("run(fetch), fetch.result") }
      try session.send("Enter")
      let field = session.wait { $0.range(of: #"\ntrue\s+42\s*\n>"#, options: .regularExpression) != nil }
      #expect(field.contains("fetch.result"), "\(field)")
      try session.send("C-d")
      session.wait { $0.contains("EXIT=") }
    }
    let history = try String(contentsOf: state.appendingPathComponent("taskrun/history"), encoding: .utf8)
    #expect(history.contains("fetch\\040=\\040operation"), "the entry is in the history file: \(history)")
    let again = try TerminalSession(command, in: Binary.workflows)
    again.wait { $0.contains("\n>") }
    try again.send(":history")
    try again.send("Enter")
    let listed = again.wait { $0.contains("run(fetch), fetch.result") }
    #expect(listed.contains("   2  run(fetch), fetch.result"), "a new session has the last one's entries: \(listed)")
  }

  @Test(.enabled(if: TerminalTests.hasTmux)) func runShowsTheLiveViewThenGivesThePromptBack() throws {
    let session = try TerminalSession("\(Binary.url.path) repl", in: Binary.workflows)
    let banner = session.wait { $0.contains("\n>") }
    #expect(
      banner.range(of: #"^taskrun \d+\.\d+\.\d+ \(Lua 5\.4\.\d+\) — :help"#, options: .regularExpression) != nil,
      "a banner, as lua prints one: \(banner)")
    try session.send(#"a = operation { name = "long-one", run = function() sleep(1.5) return 1 end }"#)
    try session.send("Enter")
    try session.send("run(a)")
    try session.send("Enter")
    let live = session.wait { $0.contains("long-one") && $0.contains("running") }
    #expect(live.range(of: #"\[[█░]+\] +\d+%"#, options: .regularExpression) != nil, "the live region shows: \(live)")
    #expect(!session.cursorVisible)
    let done = session.wait { $0.contains("\ntrue\n>") || $0.hasSuffix("true\n>") }
    #expect(done.contains("ok        long-one"), "\(done)")
    #expect(!done.contains("running"), "the region is gone before the prompt: \(done)")
    #expect(session.cursorVisible)
  }

  @Test(.enabled(if: TerminalTests.hasTmux)) func onATerminalItPromptsAndContinues() throws {
    let session = try TerminalSession("\(Binary.url.path) repl", in: Binary.workflows)
    session.wait { $0.contains("\n>") }
    try session.send("for i = 1, 2 do")
    try session.send("Enter")
    let continued = session.wait { $0.contains("\n>>") }
    #expect(continued.contains("\n>>"), "the continuation prompt: \(continued)")
    try session.send("print(i * 10) end")
    try session.send("Enter")
    // Ctrl-D only once the next prompt is up: typed while the terminal is still in cooked
    // mode (between two lines), the end-of-file mark does not survive the switch to raw mode.
    let done = session.wait { $0.contains("20\n>") }
    #expect(done.contains("10\n20\n>"), "\(done)")
    try session.send("C-d")
    let closed = session.wait { $0.contains("EXIT=") }
    #expect(closed.contains("EXIT=0"))
  }
}
