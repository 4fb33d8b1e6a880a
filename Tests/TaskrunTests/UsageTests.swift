// The command line itself: help, usage errors, exit codes, colour.
import Foundation
import Testing

@Suite struct UsageTests {
  @Test func helpListsTheOptionsAndExitsZero() throws {
    let run = try Binary.run(["--help"])
    #expect(run.status == 0)
    #expect(run.stdout.contains("USAGE: taskrun [OPTIONS] [SCRIPT] [TARGET...] [-- ARGS...]"))
    #expect(
      run.stdout.contains("SUBCOMMANDS:\n  repl ") && run.stdout.contains("\n  test ")
        && run.stdout.contains("\n  graph "))
    #expect(run.stdout.contains("--keep-going") && run.stdout.contains("--dry-run"))
  }

  @Test(arguments: [
    ["-j0", "success.lua"], ["--progress", "fancy", "success.lua"], ["-q", "-v", "success.lua"], ["--badopt"]
  ])
  func usageErrorsExitTwo(_ arguments: [String]) throws {
    let run = try Binary.run(arguments)
    #expect(run.status == 2)
    // One line saying why, as every other message starts, then where help is; no banner.
    let lines = run.stderr.split(separator: "\n")
    #expect(
      lines.count == 2 && lines[0].hasPrefix("taskrun: ") && lines[1] == "taskrun: see 'taskrun --help'",
      "\(run.stderr)")
    #expect(!run.stderr.contains("Error:") && !run.stderr.contains("Usage:"), "\(run.stderr)")
    #expect(!run.stdout.contains("start "))
  }

  @Test func aMissingScriptIsAnError() throws {
    let run = try Binary.run(["no-such-workflow.lua"])
    #expect(run.status == 2)
    #expect(run.stderr == "taskrun: cannot read 'no-such-workflow.lua': no such file\n")
  }

  // The binary allocates with mimalloc (see the README's dependencies): it reports itself
  // when asked to be verbose.
  @Test func theBinaryAllocatesWithMimalloc() throws {
    let run = Binary.finish(try Binary.start(["-q", "success.lua"], environment: ["MIMALLOC_VERBOSE": "1"]))
    #expect(run.status == 0)
    #expect(run.stderr.contains("mimalloc: process init"))
  }

  @Test func makeStyleJobCountIsAccepted() throws {
    #expect(try Binary.run(["-j3", "success.lua"]).status == 0)
  }

  @Test func colourIsForcedByFORCE_COLORAndRefusedByNO_COLOR() throws {
    let forced = Binary.finish(try Binary.start(["success.lua"], environment: ["NO_COLOR": "", "FORCE_COLOR": "1"]))
    #expect(forced.stdout.contains("\u{1B}[32mok"))
    let refused = Binary.finish(try Binary.start(["success.lua"], environment: ["NO_COLOR": "1", "FORCE_COLOR": "1"]))
    #expect(!refused.stdout.contains("\u{1B}["))
    let flag = Binary.finish(
      try Binary.start(["--no-color", "success.lua"], environment: ["NO_COLOR": "", "FORCE_COLOR": "1"]))
    #expect(!flag.stdout.contains("\u{1B}["))
  }
}
