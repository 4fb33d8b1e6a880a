// Meanings users rely on: a dry run runs nothing, self-dependencies are cycles, when = "failed"
// sees upstream failures, default names yield, builtins go through the shell, and clear messages.
import Foundation
import TestSupport
import Testing

@Suite struct MeaningTests {
  func run(_ script: String, _ arguments: [String] = [], file: String = "w.lua") throws -> (Run, URL) {
    let dir = Scratch.root.appendingPathComponent("taskrun-meaning-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
    try Data(script.utf8).write(to: dir.appendingPathComponent(file))
    return (Binary.finish(try Binary.start(["--progress", "plain"] + arguments + [file], in: dir), timeout: 30), dir)
  }

  @Test(arguments: [["-n"], ["graph"]])
  func aDryRunRunsNothingEvenFromTheTopLevel(_ mode: [String]) throws {
    let script = """
      local op = operation { name = "toucher", sh = "touch RAN" }
      assert(run(op) == true)
      wait(op)
      local r = sh("touch RAN2")
      assert(r.status == 0 and r.stdout == "")
      sleep(100)
      """
    let dir = Scratch.root.appendingPathComponent("taskrun-dry-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
    try script.write(to: dir.appendingPathComponent("w.lua"), atomically: true, encoding: .utf8)
    let arguments = mode == ["graph"] ? ["graph", "w.lua"] : ["--progress", "plain", "-n", "w.lua"]
    let run = Binary.finish(try Binary.start(arguments, in: dir), timeout: 20)
    #expect(run.status == 0, "\(run.stdout)\(run.stderr)")
    #expect((run.stdout + run.stderr).contains("(dry run) sh: touch RAN2"))
    #expect(run.stdout.contains("toucher"), "the operation run() named is still in the plan")
    #expect(!FileManager.default.fileExists(atPath: dir.appendingPathComponent("RAN").path))
    #expect(!FileManager.default.fileExists(atPath: dir.appendingPathComponent("RAN2").path))
  }

  @Test(arguments: [
    "operation { name = 'a', after = { 'a' }, sh = 'true' }",
    "local a = operation { name = 'a', sh = 'true' } a:after(a)"
  ])
  func aSelfDependencyIsACycle(_ script: String) throws {
    for mode in [[], ["-n"]] {
      let (run, _) = try run(script, mode)
      #expect(run.status == 2 && run.stderr.contains("dependency cycle: a -> a"), "\(mode): \(run.stderr)")
    }
  }

  @Test func aLongCycleIsReportedOnOneShortLine() throws {
    let (run, _) = try run(
      """
      local first = operation { name = "n1" }
      local previous = first
      for i = 2, 200000 do previous = operation { name = "n" .. i, after = { previous } } end
      first:after(previous)
      """)
    #expect(run.status == 2)
    #expect(run.stderr.count < 300 && run.stderr.contains("more)"), "\(run.stderr.prefix(500))")
  }

  @Test func whenFailedRunsForAFailureFurtherUpstream() throws {
    let (run, _) = try run(
      """
      local a = operation { name = "a", sh = "false" }
      local b = operation { name = "b", after = { a }, sh = "true" }
      operation { name = "notify", after = { b }, when = "failed", run = function() print("notified") end }
      operation { name = "quiet", after = { operation { name = "fine", sh = "true" } }, when = "failed", sh = "true" }
      """, ["-k"])
    #expect(run.status == 1)
    #expect(run.stdout.contains("notified") && run.stdout.contains("ok        notify"), "\(run.stdout)")
    #expect(run.stdout.contains("skipped   quiet: no dependency failed"))
  }

  @Test func namesResolveWhenTheRunNeedsThemAlsoAfterAnEarlierRun() throws {
    let (run, _) = try run(
      """
      operation { name = "b", after = { "c" }, sh = "true" }
      assert(run(operation { name = "a", sh = "true" }) == true)
      operation { name = "c", sh = "true" }
      """)
    #expect(run.status == 0 && run.stdout.contains("ok        b"), "\(run.stdout)\(run.stderr)")
  }

  @Test func defaultNamesNeverTakeANameTheScriptChose() throws {
    let (run, _) = try run(
      """
      operation { name = "op2", sh = "true" }
      local unnamed = operation { sh = "true" }
      operation { sh = "true" }
      local later = operation { sh = "true" }
      operation { name = "op4", sh = "true" }
      assert(unnamed.name == "op2_2", unnamed.name)
      assert(later.name == "op4_2", later.name)
      """)
    #expect(run.status == 0, "\(run.stdout)\(run.stderr)")
  }

  @Test(arguments: ["command -v sh", "type sh", "hash sh", "times", "getopts a opt -a"])
  func shellBuiltinsGoThroughTheShell(_ command: String) throws {
    let (run, _) = try run("operation { name = 'b', sh = [[\(command)]] }")
    #expect(run.status == 0, "\(command): \(run.stdout)")
  }

  @Test(arguments: ["#!/usr/bin/env taskrun\n", "\u{FEFF}", "\u{FEFF}#!/usr/bin/env taskrun\n"])
  func aScriptMayStartWithAShebangOrAByteOrderMark(_ start: String) throws {
    let (run, _) = try run(start + "operation { name = 'a', sh = 'true' }\nerror('line 2')\n")
    let line = start.hasSuffix("\n") ? 3 : 2  // the #! line keeps its number
    #expect(run.status == 2 && run.stderr.contains("w.lua:\(line): line 2"), "\(run.stderr)")
  }

  @Test func aCommandThatCannotBeSpawnedCouldNotStart() throws {
    let dir = Scratch.root.appendingPathComponent("taskrun-fds-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
    try "for i = 1, 20 do operation { name = 's' .. i, sh = 'sleep 0.3' } end"
      .write(to: dir.appendingPathComponent("w.lua"), atomically: true, encoding: .utf8)
    let started = try Binary.start(
      ["-c", "ulimit -n 24; exec \"$0\" -j20 -k --progress plain w.lua", Binary.url.path],
      in: dir, program: "/bin/sh")
    let run = Binary.finish(started, timeout: 30)
    #expect(run.status == 1, "\(run.stdout)\(run.stderr)")
    #expect(
      run.stderr.contains("could not start (sleep: cannot start: Too many open files)")
        || run.stderr.contains("could not start (cannot create a pipe"), "failures are on stderr: \(run.stderr)")
  }

  @Test func messagesNameWhatIsWrong() throws {
    let (table, _) = try run("error({})")
    #expect(table.stderr.contains("w.lua: (error object is a table value)"), "\(table.stderr)")
    let directory = try Binary.run(["/tmp"])
    #expect(directory.status == 2 && directory.stderr.contains("it is a directory"))
    let jobs = try Binary.run(["-j", "-1", "w.lua"])
    #expect(jobs.status == 2 && jobs.stderr.contains("-j must be at least 1 (got -1)"), "\(jobs.stderr)")
    let (unknown, _) = try run("operation { name = 'abc', after = { 'abd' } }")
    #expect(unknown.status == 2 && !unknown.stderr.contains("did you mean 'abc'"), "\(unknown.stderr)")
  }
}
