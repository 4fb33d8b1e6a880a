// interactive = true through the binary: alone, with the terminal (tmux), Ctrl-C, and without a terminal.
import Foundation
import TestSupport
import Testing

@Suite struct InteractiveTests {
  static let hasTmux = TerminalTests.hasTmux

  /// An operation that runs first, an interactive one that asks, and one declared after it;
  /// each writes its start and end to `log`.
  static func script(_ env: String) -> String {
    """
    operation { name = "before", \(env), sh = "echo before-start >> log; sleep 0.5; echo before-end >> log" }
    operation { name = "ask", \(env), interactive = true,
      sh = "echo ask-start >> log; [ -t 0 ] && echo stdin-is-a-terminal; printf 'name? '; read x; echo got $x; echo ask-end >> log" }
    operation { name = "after", \(env), sh = "echo after-start >> log; sleep 0.3; echo after-end >> log" }
    """
  }

  /// The log's lines: the interactive operation's start and end are next to each other (nothing
  /// ran meanwhile), and what started before it ended before it started.
  func expectAlone(_ dir: URL, sourceLocation: SourceLocation = #_sourceLocation) throws {
    let log = try String(contentsOf: dir.appendingPathComponent("log"), encoding: .utf8).split(separator: "\n")
    let start = log.firstIndex(of: "ask-start"), end = log.firstIndex(of: "ask-end")
    #expect(
      start != nil && end == start.map { $0 + 1 }, "something ran with it: \(log)", sourceLocation: sourceLocation)
    if let start {
      #expect(
        log.firstIndex(of: "before-end").map { $0 < start } == true, "it started while 'before' ran: \(log)",
        sourceLocation: sourceLocation)
    }
    #expect(log.count == 6, "\(log)", sourceLocation: sourceLocation)
  }

  @Test(.enabled(if: hasTmux)) func itRunsAloneWithTheTerminalAndTheViewComesBack() throws {
    let w = try MarkedWorkflow { Self.script($0) }
    let session = try TerminalSession("\(Binary.url.path) --no-store -j4 w.lua", in: w.dir)
    let asked = session.wait { $0.contains("name?") }
    #expect(asked.contains("stdin-is-a-terminal"), "\(asked)")
    try session.send("hello-there")
    try session.send("Enter")
    let done = session.wait { $0.contains("EXIT=") }
    #expect(done.contains("got hello-there") && done.contains("EXIT=0"), "\(done)")
    #expect(done.contains("3 succeeded"), "\(done)")
    #expect(session.cursorVisible, "the cursor stayed hidden")
    try expectAlone(w.dir)
    #expect(w.survivors(after: 0.5).isEmpty)
  }

  @Test(.enabled(if: hasTmux)) func ctrlCWhileItRunsStopsTheRunAsEver() throws {
    let w = try MarkedWorkflow { Self.script($0) }
    let session = try TerminalSession("\(Binary.url.path) --no-store -j4 w.lua", in: w.dir)
    session.wait { $0.contains("name?") }
    try session.send("C-c")
    let done = session.wait { $0.contains("EXIT=") }
    #expect(done.contains("EXIT=130") && done.contains("(interrupted)"), "\(done)")
    #expect(done.contains("cancelled ask: interrupted"), "\(done)")
    #expect(!done.contains("after-start"))
    #expect(w.survivors(after: 1).isEmpty, "something was left running")
    let log = try String(contentsOf: w.dir.appendingPathComponent("log"), encoding: .utf8)
    #expect(!log.contains("after-start"), "\(log)")
  }

  /// The workflow run from an interactive bash, stopped with Ctrl-Z while its interactive
  /// command asks its question: the workflow, the session and the screen that says so.
  static func stoppedAtTheQuestion() throws -> (MarkedWorkflow, TerminalSession, String) {
    let w = try MarkedWorkflow { Self.script($0) }
    let session = try TerminalSession("bash --norc -i", in: w.dir)
    session.wait { $0.contains("$") || $0.contains("#") }
    try session.send("\(Binary.url.path) --no-store -j4 w.lua\n")
    session.wait { $0.contains("name?") }
    try session.send("C-z")
    return (w, session, session.wait { $0.contains("Stopped") })
  }

  @Test(.enabled(if: hasTmux)) func ctrlZStopsTaskrunAndFgGivesTheCommandTheTerminalAgain() throws {
    let (w, session, stopped) = try Self.stoppedAtTheQuestion()
    #expect(stopped.contains("Stopped"), "taskrun did not stop with its command: \(stopped)")
    try session.send("fg\n")
    usleep(500_000)
    try session.send("resumed-answer\n")
    let done = session.wait { $0.contains("3 succeeded") }
    #expect(done.contains("got resumed-answer") && done.contains("3 succeeded"), "\(done)")
    try expectAlone(w.dir)
    #expect(w.survivors(after: 0.5).isEmpty)
  }

  @Test func withoutATerminalItReadsTaskrunsStandardInputAndStillRunsAlone() throws {
    let w = try MarkedWorkflow { Self.script($0) }
    let run = Binary.finish(
      try Binary.start(["--progress", "plain", "--no-store", "-j4", "w.lua"], in: w.dir, input: "from-stdin\n"))
    #expect(run.status == 0, "\(run.stdout)\(run.stderr)")
    #expect(run.stdout.contains("got from-stdin") && !run.stdout.contains("stdin-is-a-terminal"), "\(run.stdout)")
    let lines = run.stdout.split(separator: "\n")
    let started = lines.firstIndex { $0.hasPrefix("start") && $0.hasSuffix(" ask") }
    let answered = lines.firstIndex { $0.hasSuffix("got from-stdin") }
    #expect(started != nil && answered != nil && started! < answered!, "taskrun's lines came after: \(run.stdout)")
    try expectAlone(w.dir)
  }

  @Test func anInteractiveBodysCommandsGetTheInputToo() throws {
    let w = try MarkedWorkflow { env in
      """
      operation { name = "body", interactive = true, run = function()
        local r = sh("read x; echo \\"$x\\" > answer", { \(env) })
      end }
      """
    }
    let run = Binary.finish(try Binary.start(["--progress", "plain", "--no-store", "w.lua"], in: w.dir, input: "42\n"))
    #expect(run.status == 0, "\(run.stdout)\(run.stderr)")
    #expect(try String(contentsOf: w.dir.appendingPathComponent("answer"), encoding: .utf8) == "42\n")
  }

  /// An interactive operation ready first (its priority) among others that are ready too:
  /// nothing else starts in the pump that starts it, with `sh` or with a body's `sh()`; in
  /// group mode the others' blocks come after its output.
  @Test(arguments: ["sh", "body"]) func nothingStartsWhileItRunsOnceStarted(_ form: String) throws {
    let command = "echo ask-start >> log; echo ask-out; sleep 0.5; echo ask-end >> log"
    let w = try MarkedWorkflow { env in
      let ask =
        form == "sh"
        ? "\(env), sh = \"\(command)\""
        : "run = function() sh(\"\(command)\", { \(env) }) end"
      return """
        operation { name = "ask", priority = "very_high", interactive = true, \(ask) }
        for i = 1, 3 do
          operation { name = "other" .. i, \(env), sh = "echo other-start >> log; echo other-out" .. i .. "; echo other-end >> log" }
        end
        """
    }
    let run = Binary.finish(
      try Binary.start(["--progress", "plain", "--no-store", "-j8", "--output", "group", "w.lua"], in: w.dir, input: "")
    )
    #expect(run.status == 0, "\(run.stdout)\(run.stderr)")
    let log = try String(contentsOf: w.dir.appendingPathComponent("log"), encoding: .utf8).split(separator: "\n")
    #expect(log.prefix(2) == ["ask-start", "ask-end"], "something started while it ran: \(log)")
    let lines = run.stdout.split(separator: "\n")
    let asked = lines.firstIndex { $0.hasSuffix("ask-out") }
    let others = lines.firstIndex { $0.contains("other-out") }
    #expect(asked != nil && others != nil && asked! < others!, "a block came while it ran: \(run.stdout)")
  }

  /// A failed attempt gives the terminal back and the next one takes it: two attempts, then
  /// the usual FAILED line and summary.
  @Test func anInteractiveOperationIsTriedAgain() throws {
    let w = try MarkedWorkflow { env in
      """
      operation { name = "r", \(env), interactive = true, retries = 1, sh = "echo try >> log; exit 4" }
      """
    }
    let run = Binary.finish(
      try Binary.start(["--progress", "plain", "--no-store", "--events", "events.jsonl", "w.lua"], in: w.dir, input: "")
    )
    #expect(run.status == 1, "\(run.stdout)\(run.stderr)")
    let log = try String(contentsOf: w.dir.appendingPathComponent("log"), encoding: .utf8)
    #expect(log == "try\ntry\n", "\(log)")
    let all = run.stdout + run.stderr
    #expect(all.contains("FAILED") && all.contains("r") && !all.contains("never started"), "\(all)")
    #expect(all.contains("0 succeeded, 1 failed in"), "\(all)")
    let finish = w.events().last { $0["event"] as? String == "run_finish" }
    #expect(finish?["failed"] as? Int == 1 && finish?["cancelled"] as? Int == 0, "\(String(describing: finish))")
    let prompts = w.events().filter { $0["event"] as? String == "prompt" }
    #expect(prompts.last.map { $0["text"] == nil || $0["text"] is NSNull } ?? false, "the prompt stayed: \(prompts)")
  }

  /// Ctrl-Z, then `bg`: the command, now without the terminal, is killed with a reason that
  /// says to use `fg`, and taskrun, in the background, leaves the terminal to the shell, which
  /// keeps working (it had exited at the next key).
  @Test(.enabled(if: hasTmux)) func ctrlZThenBgLeavesTheTerminalToTheShell() throws {
    let (w, session, stopped) = try Self.stoppedAtTheQuestion()
    #expect(stopped.contains("Stopped"), "\(stopped)")
    try session.send("bg\n")
    let killed = session.wait { $0.contains("SIGTTIN") }
    #expect(killed.contains("needs taskrun in the foreground"), "\(killed)")
    usleep(1_000_000)
    try session.send(
      #"[ "$(ps -o tpgid= -p $$ | tr -d ' ')" = "$(ps -o pgid= -p $$ | tr -d ' ')" ] && echo FG-OK-$((40+2))"#
        + "\n")
    let after = session.wait { $0.contains("FG-OK-42") || $0.contains("EXIT=") }
    #expect(after.contains("FG-OK-42") && !after.contains("EXIT="), "the shell lost its terminal: \(after)")
    #expect(w.survivors(after: 1).isEmpty)
  }

  /// A command killed by its timeout after `stty -echo`: the terminal's modes are as they were.
  @Test(.enabled(if: hasTmux)) func theTerminalsModesComeBackWhenTheCommandIsKilled() throws {
    let w = try MarkedWorkflow { env in
      #"operation { name = "quiet", \#(env), interactive = true, timeout = 1, sh = "stty -echo; read x" }"#
    }
    let session = try TerminalSession(
      "\(Binary.url.path) --no-store w.lua; stty -a | tr ' ;' '\\n\\n' | grep -x -e echo -e -echo | sed 's/^/MODE=/'",
      in: w.dir)
    let done = session.wait { $0.contains("EXIT=") }
    #expect(done.contains("MODE=echo") && !done.contains("MODE=-echo"), "\(done)")
  }

  @Test func interactiveMustBeABoolean() throws {
    let w = try MarkedWorkflow { _ in #"operation { name = "x", interactive = "yes", sh = "true" }"# }
    let run = try Binary.run(["--no-store", "w.lua"], in: w.dir)
    #expect(run.status == 2 && run.stderr.contains("field 'interactive' must be a boolean"), "\(run.stderr)")
  }
}
