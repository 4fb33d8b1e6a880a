// Messages have one form: usage errors start with taskrun: like the rest, and a NaN reads nan everywhere.
import Foundation
import TestSupport
import Testing

@Suite struct MessageFormTests {
  /// The usage errors taskrun itself finds (not swift-argument-parser's): the reason on one
  /// line, the help hint on the next; a subcommand's hint names the subcommand.
  @Test(arguments: [
    (["-j", "0", "success.lua"], "taskrun: -j must be at least 1 (got 0)", "taskrun --help"),
    (
      ["--events", "same.json", "--trace", "./same.json", "success.lua"],
      "taskrun: --events and --trace name the same file ('./same.json'): each needs its own", "taskrun --help"
    ),
    (["graph", "--bogus"], "taskrun: unknown option '--bogus'", "taskrun graph --help")
  ])
  func aUsageErrorIsOneLineAndAHint(_ arguments: [String], _ message: String, _ help: String) throws {
    let run = try Binary.run(arguments)
    #expect(run.status == 2)
    #expect(run.stderr == "\(message)\ntaskrun: see '\(help)'\n", "\(run.stderr)")
  }

  /// 0/0 is `-nan` to glibc's printf: the checks of sleep and os.exit said so, every other
  /// check (and the docs) `nan`.
  @Test(arguments: [
    ("sleep(0/0)", "bad argument #1 to 'sleep' (a finite number of seconds ≥ 0 expected, got nan)"),
    ("os.exit(0/0)", "bad argument #1 to 'exit' (an exit status from 0 to 255 or a boolean expected, got nan)"),
    ("sleep(-(0/0))", "bad argument #1 to 'sleep' (a finite number of seconds ≥ 0 expected, got nan)"),
    ("os.exit(-1/0)", "bad argument #1 to 'exit' (an exit status from 0 to 255 or a boolean expected, got -inf)"),
    ("operation { name = 'a', timeout = 0/0 }", "got nan")
  ])
  func aNaNReadsNan(_ line: String, _ message: String) throws {
    let dir = Scratch.root.appendingPathComponent("taskrun-nan-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
    try (line + "\n").write(to: dir.appendingPathComponent("n.lua"), atomically: true, encoding: .utf8)
    let run = try Binary.run(["-q", "n.lua"], in: dir)
    #expect(run.status == 2 && run.stderr.contains(message) && !run.stderr.contains("-nan"), "\(run.stderr)")
  }
}
