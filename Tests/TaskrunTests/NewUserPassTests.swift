// What a new user's pass found in the engine and the Lua host: names in `after` resolved only for what a run selects, graph pictures escaped, bound and range messages that say what happened.
import Foundation
import TestSupport
import Testing

/// Writes `script` as `w.lua` in a scratch folder and runs taskrun there with `arguments`.
private func runScript(_ script: String, _ arguments: [String]) throws -> Run {
  let dir = Scratch.root.appendingPathComponent("taskrun-pass-\(UUID().uuidString)")
  try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
  defer { try? FileManager.default.removeItem(at: dir) }
  try script.write(to: dir.appendingPathComponent("w.lua"), atomically: true, encoding: .utf8)
  return Binary.finish(try Binary.start(arguments, in: dir), timeout: 60)
}

@Suite struct AfterNameSelectionTests {
  static let misspelt = """
    operation{name="a", after={"biuld"}, sh="true"}
    operation{name="build", sh="true"}
    """

  /// A misspelt name in an operation the run leaves out does not stop a run, a dry run or a
  /// graph of another target.
  @Test(arguments: [
    (["--progress", "plain", "w.lua", "build"], "ok        build"),
    (["-n", "w.lua", "build"], "1. build"),
    (["graph", "w.lua", "build"], "\"build\"")
  ])
  func aBadNameOfAnOperationLeftOutIsNoError(_ arguments: [String], _ shown: String) throws {
    let run = try runScript(Self.misspelt, arguments)
    #expect(run.status == 0, "\(run.stdout)\(run.stderr)")
    #expect(run.stdout.contains(shown), "\(run.stdout)")
    #expect(!run.stderr.contains("biuld"), "\(run.stderr)")
  }

  /// A target that names nothing is reported as an unknown target, even when an `after`
  /// gives the same name.
  @Test func anUnknownTargetIsReportedAsOne() throws {
    let run = try runScript(Self.misspelt, ["w.lua", "biuld"])
    #expect(run.status == 2, "\(run.stdout)\(run.stderr)")
    #expect(run.stderr.contains("taskrun: w.lua: unknown target 'biuld'; did you mean 'build'?"), "\(run.stderr)")
    #expect(!run.stderr.contains("depends on"), "\(run.stderr)")
  }

  /// The run needs the bad name (its target, a target's dependency, or every operation when
  /// there is no target): the error keeps its line and its suggestion.
  @Test(arguments: [
    ["--progress", "plain", "w.lua", "a"], ["--progress", "plain", "w.lua", "c"], ["--progress", "plain", "w.lua"],
    ["-n", "w.lua", "c"], ["graph", "w.lua", "c"]
  ])
  func aBadNameTheRunNeedsIsAnError(_ arguments: [String]) throws {
    let run = try runScript(Self.misspelt + "\noperation{name=\"c\", after={\"a\"}, sh=\"true\"}\n", arguments)
    #expect(run.status == 2, "\(run.stdout)\(run.stderr)")
    #expect(
      run.stderr.contains("w.lua:1: 'a' depends on 'biuld', but no operation has that name; did you mean 'build'?"),
      "\(run.stderr)")
    #expect(!run.stdout.contains("build"), "nothing runs or is shown: \(run.stdout)")
  }
}

@Suite struct GraphEscapeTests {
  /// A control character in a command is shown as `-n` shows it (`\27`) in the dot and
  /// Mermaid pictures, never written raw; JSON keeps it as JSON writes it (`\u001b`).
  @Test(arguments: ["dot", "mermaid"])
  func aControlCharacterInACommandIsEscaped(_ format: String) throws {
    let run = try runScript(
      "operation{name=\"a\", sh=\"echo '\\27[2Jx'\\r\"}\n", ["graph", "--format", format, "w.lua"])
    #expect(run.status == 0, "\(run.stdout)\(run.stderr)")
    #expect(!run.stdout.contains("\u{1B}") && !run.stdout.contains("\r"), "\(run.stdout.debugDescription)")
    #expect(run.stdout.contains(format == "dot" ? "echo '\\\\27[2Jx'\\\\r" : "echo '\\27[2Jx'\\r"), "\(run.stdout)")
  }
}

@Suite struct BoundMessageTests {
  /// print's __tostring in a body is bounded as taskrun calls it itself; the message says
  /// so, and names the __tostring, without claiming the code ran outside a body.
  @Test func aPrintedValueWhoseTostringLoopsSaysWhatWasStopped() throws {
    let run = try runScript(
      """
      operation{name="p", run=function()
        print(setmetatable({}, {__tostring=function() while true do end end}))
      end}
      """, ["--progress", "plain", "w.lua"])
    #expect(run.status == 1, "\(run.stdout)\(run.stderr)")
    #expect(
      run.stderr.contains(
        "stopped after 10 million instructions in a __tostring metamethod (taskrun bounds the Lua code it calls itself)"
      ),
      "\(run.stderr)")
    #expect(!run.stderr.contains("outside a body"), "\(run.stderr)")
  }
}

@Suite struct RangeMessageTests {
  /// Every range error of a numeric field or argument shows what it got.
  @Test(arguments: [
    ("operation{name='a', sh='true', timeout=-1}", "field 'timeout' must be a positive number of seconds (got -1)"),
    ("operation{name='a', sh='true', timeout=0}", "field 'timeout' must be a positive number of seconds (got 0)"),
    (
      "operation{name='a', sh='true', retry={}}",
      "retry: field 'max' must be a whole number from 0 to 1000000 (got nil)"
    ),
    ("operation{name='a', sh='true', weight=-2}", "field 'weight' must be from 0 to 1000000000 (got -2)"),
    ("timeout(-1)", "bad argument #1 to 'timeout' (positive number of seconds expected, got -1)"),
    ("background(-0.5)", "bad argument #1 to 'background' (number of seconds ≥ 0 expected, got -0.5)"),
    ("resource('r', 0)", "bad argument #2 to 'resource' (positive integer expected, got 0)"),
    ("reachable('localhost', 70000)", "bad argument #2 to 'reachable' (port number expected, got 70000)"),
    ("progress{}:become_current(-3)", "bad argument #2 to 'become_current' (non-negative integer expected, got -3)")
  ])
  func aRangeErrorShowsWhatItGot(_ line: String, _ message: String) throws {
    let run = try runScript(line + "\n", ["-q", "w.lua"])
    #expect(run.status == 2, "\(run.stdout)\(run.stderr)")
    #expect(run.stderr.contains("w.lua:1: ") && run.stderr.contains(message), "\(run.stderr)")
  }
}
