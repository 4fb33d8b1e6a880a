// A dry run's (and the sandbox's) wrappers of Lua's library raise the errors a run raises: the caller's line, the function's name, no traceback.
import Foundation
import TestSupport
import Testing

@Suite struct DryRunMessageTests {
  /// Bad arguments to every function dryrun.lua wraps (each script a line 1 that raises).
  static let calls = [
    #"io.open("/tmp/x", "W")"#, "io.open()", "io.open({})", #"io.open("/tmp/x", {})"#, #"io.open("/tmp/x", 5)"#,
    #"local o = io.open; o("/tmp/x", "W")"#, "io.output({})", "io.output(true)",
    "io.popen()", "io.popen({})", #"io.popen("true", "rw")"#, #"io.popen("true", {})"#,
    "os.execute({})", "os.remove()", "os.remove({})", #"os.rename("a")"#, #"os.rename({}, "b")"#,
    #"os.rename("a", {})"#,
    "load()", #"load("return 1", {})"#, #"load("return 1", "x", {})"#, "load(setmetatable({}, {__name = 'Thing'}))",
    "loadfile({})", #"loadfile("x.lua", {})"#, "dofile({})", #"dofile("no-such-file.lua")"#,
    "require({})", "require()", #"require("no_such_module")"#
  ]

  /// `-n` says what a run says (the run's messages are Lua's own for the C functions).
  @Test(arguments: calls)
  func aBadArgumentReadsAsInARun(_ call: String) throws {
    let dir = Scratch.root.appendingPathComponent("taskrun-drymessage-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
    try (call + "\n").write(to: dir.appendingPathComponent("m.lua"), atomically: true, encoding: .utf8)
    let run = try Binary.run(["-q", "m.lua"], in: dir)
    let dry = try Binary.run(["-q", "-n", "m.lua"], in: dir)
    #expect(run.status == 2 && dry.status == 2, "\(run.stderr)\(dry.stderr)")
    #expect(run.stderr.hasPrefix("taskrun: m.lua:1: ") || run.stderr.hasPrefix("taskrun: cannot open"), "\(run.stderr)")
    #expect(dry.stderr == run.stderr, "run: \(run.stderr)\ndry run: \(dry.stderr)")
  }

  /// --sandbox wraps load as well (text only): its errors, with and without -n, are load's.
  @Test(arguments: [
    "load()", #"load("return 1", {})"#, #"load("return 1", "x", {})"#, "local l = load; l()",
    #"local f, e = load("return 1", "=x", "b"); error(e)"#
  ])
  func aSandboxedLoadRaisesAsLoad(_ call: String) throws {
    let dir = Scratch.root.appendingPathComponent("taskrun-sandboxmessage-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
    try (call + "\n").write(to: dir.appendingPathComponent("m.lua"), atomically: true, encoding: .utf8)
    let run = try Binary.run(["-q", "m.lua"], in: dir)
    #expect(run.status == 2 && run.stderr.hasPrefix("taskrun: m.lua:1: "), "\(run.stderr)")
    for options in [["--sandbox"], ["--sandbox", "-n"]] {
      let confined = try Binary.run(options + ["-q", "m.lua"], in: dir)
      #expect(
        confined.status == 2 && confined.stderr == run.stderr, "\(options): \(confined.stderr) run: \(run.stderr)")
    }
  }
}
