// What a script's failures look like to its user: exit codes of awaited failures, and error messages compared with lua5.4's.
import Foundation
import Testing

@Suite struct AwaitedFailureTests {
  /// A failed operation is exit 1 whichever way the top level awaited it; an uncaught wait
  /// ends the script at that line, with the line printed and the summary, no traceback.
  @Test(arguments: ["wait(a)", "a:wait()", "print(run(a))", "print(pcall(wait, a))"])
  func aFailedOperationIsExitOne(_ awaiting: String) throws {
    let run = try ScriptRun.run("""
      a = operation { name = "a", run = function() error("bad") end }
      \(awaiting)
      """, timeout: 60)
    #expect(run.status == 1, "\(run.stdout)\(run.stderr)")
    #expect(run.stderr.contains("FAILED    a (") && run.stderr.contains("a: w.lua:1: bad"), "\(run.stderr)")
    #expect(run.stdout.contains("0 succeeded, 1 failed"), "\(run.stdout)")
    #expect(!run.stderr.contains("main chunk"), "\(run.stderr)")
  }

  /// Another error after a caught wait is still a script error.
  @Test func anotherErrorAfterACaughtWaitIsAScriptError() throws {
    let run = try ScriptRun.run("""
      a = operation { name = "a", run = function() error("bad") end }
      pcall(wait, a)
      error("mine")
      """, timeout: 60)
    #expect(run.status == 2 && run.stderr.contains("taskrun: w.lua:3: mine"), "\(run.stdout)\(run.stderr)")
  }
}
