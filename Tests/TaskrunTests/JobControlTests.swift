// Job control on a real terminal: Ctrl-Z and fg, a command that reads the terminal, Ctrl-C in the REPL.
import Foundation
import Testing

@Suite(.serialized) struct JobControlTests {
  static let hasTmux = TerminalTests.hasTmux

  /// The state letter of a process (R, S, T, Z…) from /proc.
  func state(_ pid: pid_t) -> Character? {
    guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
      let after = stat.split(separator: ")").last
    else { return nil }
    return after.trimmingCharacters(in: .whitespaces).first
  }

  @Test(.enabled(if: hasTmux)) func ctrlZStopsTheCommandsAndRestoresTheTerminalAndFgResumes() throws {
    let w = try MarkedWorkflow { env in #"operation { name = "sleeper", \#(env), sh = "sleep 2" }"# }
    let session = try TerminalSession("bash --norc -i", in: w.dir)
    session.wait { $0.contains("$") || $0.contains("#") }
    try session.send("\(Binary.url.path) w.lua\n")
    session.wait { $0.contains("sleeper") }
    usleep(300_000)
    try session.send("C-z")
    let stopped = session.wait { $0.contains("Stopped") }
    #expect(stopped.contains("Stopped"), "\(stopped)")
    #expect(session.cursorVisible, "the cursor stayed hidden after Ctrl-Z")
    let commands = w.survivors()
    #expect(commands.count == 1 && commands.allSatisfy { state($0) == "T" }, "the command kept running")
    sleep(2)  // longer than the command would take: it must not have run meanwhile
    try session.send("fg\n")
    let done = session.wait { $0.contains("1 succeeded") }
    #expect(done.contains("ok        sleeper") && done.contains("1 succeeded"), "\(done)")
    #expect(w.survivors(after: 0.5).isEmpty)
  }

  @Test(.enabled(if: hasTmux)) func aCommandThatReadsTheTerminalFailsInsteadOfHanging() throws {
    let w = try MarkedWorkflow { env in
      """
      operation { name = "reader", \(env), sh = { "sh", "-c", "read x < /dev/tty; echo got $x" } }
      operation { name = "other", sh = "sleep 0.5" }
      """
    }
    let session = try TerminalSession("\(Binary.url.path) w.lua", in: w.dir)
    let screen = session.wait(timeout: 10) { $0.contains("EXIT=") }
    #expect(screen.contains("EXIT=1"), "\(screen)")
    #expect(screen.contains("stopped to read the terminal (SIGTTIN)"))
    #expect(screen.contains("ok        other"))
    #expect(w.survivors(after: 0.5).isEmpty)
  }

  @Test(.enabled(if: hasTmux)) func ctrlCInTheREPLStopsATopLevelWaitAndReturnsToThePrompt() throws {
    let w = try MarkedWorkflow { env in "MARKED = { \(env) }" }
    let session = try TerminalSession("\(Binary.url.path) repl w.lua", in: w.dir)
    session.wait { $0.contains("loaded w.lua") }
    try session.send(#"sh("sleep 30", MARKED); print("went on")"# + "\n")
    let running = session.wait(timeout: 5) { _ in !w.survivors().isEmpty }
    #expect(!w.survivors().isEmpty, "the command did not start: \(running)")
    try session.send("C-c")
    let back = session.wait { $0.contains("interrupted") }
    let lines = back.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }
    #expect(back.contains("interrupted") && !lines.contains("went on"), "\(back)")
    #expect(w.survivors(after: 3).isEmpty)
    try session.send("1 + 41\n")
    #expect(session.wait { $0.contains("42") }.contains("42"), "the prompt did not come back")
    try session.send("os.exit(4)\n")
    #expect(session.wait { $0.contains("EXIT=") }.contains("EXIT=4"))
  }
}
