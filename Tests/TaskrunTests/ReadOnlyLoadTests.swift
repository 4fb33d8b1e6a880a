// Loads that only read a script (--list, graph, completion, the subcommand check): what it writes stays off standard output, and a top level that never ends cannot hold them.
import Foundation
import TestSupport
import Testing

@Suite struct ReadOnlyLoadTests {
  /// A folder whose taskrun.lua is `script`.
  func project(_ script: String) throws -> URL {
    let dir = Scratch.root.appendingPathComponent("taskrun-readonly-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
    try script.write(to: dir.appendingPathComponent("taskrun.lua"), atomically: true, encoding: .utf8)
    return dir
  }

  /// Runs taskrun and says whether it ended by itself within 30 s (its limits are 2 and 5 s;
  /// the rest is room for a busy machine); one that did not is interrupted, then killed.
  func runBounded(_ arguments: [String], in dir: URL) throws -> (ended: Bool, run: Run) {
    let started = try Binary.start(arguments, in: dir)
    guard let status = started.child.wait(timeout: 30) else { return (false, Binary.finish(started, timeout: 0)) }
    var run = Binary.finish(started, timeout: 0)  // reaped: reads what it wrote
    run.status = status
    return (true, run)
  }

  static let writer = """
    io.write("iowrite\\n") io.stdout:write("stdoutwrite\\n") io.output():write("outputwrite\\n")
    io.stderr:write("stderrwrite\\n") print("printed")
    operation { name = "build", sh = "true" }
    io.write("no newline")
    """

  /// io.write, io.stdout:write and io.output():write go where print goes: standard error
  /// for --list, --list-names and graph (a last line without its newline too), nowhere for
  /// completion and the subcommand check; standard output is only the listing or the picture.
  @Test func writesStayOffTheListingAndThePicture() throws {
    let dir = try project(Self.writer)
    let written = ["iowrite", "stdoutwrite", "outputwrite", "stderrwrite", "printed", "no newline"]
    let names = try Binary.run(["--list-names"], in: dir)
    #expect(names.status == 0 && names.stdout == "build\n", "\(names.stdout)")
    for text in written { #expect(names.stderr.contains(text), "\(text) on standard error: \(names.stderr)") }
    let list = try Binary.run(["--list"], in: dir)
    #expect(list.status == 0 && list.stdout == "Operations in taskrun.lua:\n  build\n", "\(list.stdout)")
    let graph = try Binary.run(["graph"], in: dir)
    #expect(graph.status == 0 && graph.stdout.hasPrefix("digraph taskrun {"), "\(graph.stdout)")
    for text in written {
      #expect(graph.stderr.components(separatedBy: text).count == 2, "\(text) once (one load): \(graph.stderr)")
    }
    let complete = try Binary.run(["--complete", "--", ""], in: dir)
    #expect(
      complete.status == 0 && complete.stdout.hasPrefix("lua\n") && complete.stdout.contains("\nbuild\n"),
      "\(complete.stdout)")
    for run in [complete, try Binary.run(["test", "-o", "json"], in: dir), try Binary.run(["help"], in: dir)] {
      for text in written {
        #expect(!run.stdout.contains(text) && !run.stderr.contains(text), "a silent load: \(run.stdout)\(run.stderr)")
      }
    }
  }

  /// The run itself still writes to standard output.
  @Test func aRunStillWritesToStandardOutput() throws {
    let run = try Binary.run(["-q"], in: try project(Self.writer))
    #expect(run.status == 0 && run.stdout.contains("iowrite\nstdoutwrite\noutputwrite\n"), "\(run.stdout)")
  }

  /// A top level that never ends (a loop, one inside pcall, an open of a FIFO no one writes):
  /// completion gives up on the targets after its time limit and still answers; `test` and
  /// `help` say the script did not finish loading and how to reach the subcommand.
  @Test(arguments: [
    "while true do end",
    "while true do pcall(function() while true do end end) end",
    "local line = io.open('fifo'):read('l')"
  ])
  func aTopLevelThatNeverEndsHoldsNoCompletionOrSubcommand(_ top: String) throws {
    let dir = try project(top + "\noperation { name = \"build\", sh = \"true\" }\n")
    #expect(mkfifo(dir.appendingPathComponent("fifo").path, 0o600) == 0)
    let (ended, complete) = try runBounded(["--complete", "--", ""], in: dir)
    #expect(ended, "completion gave up on the script by itself")
    #expect(
      complete.status == 0
        && complete.stdout
          == "lua\nrepl\ntest\ngraph\nstatus\nwatch\ncancel\npause\nresume\nwhy\nhistory\nruns\nreport\nhelp\n",
      "\(complete.status) \(complete.stdout)")
    for word in ["test", "help"] {
      let (ended, run) = try runBounded([word], in: dir)
      #expect(ended && run.status == 2, "\(word): \(run.status) \(run.stderr)")
      #expect(
        run.stderr.contains("taskrun.lua did not finish loading within 5 s")
          && run.stderr.contains("taskrun -- \(word) runs the subcommand"), "\(run.stderr)")
    }
  }

  /// A top level that reads the terminal (`/dev/tty`) reads nothing while it is only read:
  /// completion answers at once with the targets declared after the read.
  @Test(.enabled(if: TerminalTests.hasTmux)) func aTerminalReadsAsEmpty() throws {
    let dir = try project(
      """
      local line = io.open("/dev/tty"):read("l")
      for l in io.lines("/dev/tty") do print(l) end
      io.input("/dev/tty")
      operation { name = "build", sh = "true", desc = tostring(line) .. tostring(io.read("l")) }
      """)
    let session = try TerminalSession(
      "\(Binary.url.path) --complete -- '' > out.txt; \(Binary.url.path) --list >> out.txt", in: dir)
    let screen = session.wait(timeout: 30) { $0.contains("EXIT=") }
    #expect(screen.contains("EXIT=0"), "\(screen)")
    let out = try String(contentsOf: dir.appendingPathComponent("out.txt"), encoding: .utf8)
    #expect(out.hasPrefix("lua\n") && out.contains("\nbuild\n") && out.contains("  build  nilnil\n"), "\(out)")
    #expect(
      screen.contains("(dry run) io.open: '/dev/tty' is a terminal or standard input (read as empty)"), "\(screen)")
  }

  /// What is piped to taskrun belongs to the run: a load that only reads the script does not
  /// take it through /dev/stdin.
  @Test func standardInputIsNotTakenThroughDevStdin() throws {
    let dir = try project(
      """
      print("got[" .. io.open("/dev/stdin"):read("a") .. "]")
      operation { name = "build", sh = "true" }
      """)
    let piped = Binary.finish(
      try Binary.start(
        ["-c", #"printf secret | "$0" --list-names"#, Binary.url.path],
        in: dir, program: "/bin/sh"))
    #expect(
      piped.status == 0 && piped.stdout == "build\n" && piped.stderr.contains("got[]"), "\(piped.stdout)\(piped.stderr)"
    )
    let file = Binary.finish(try Binary.start(["--list-names"], in: dir, input: "secret"))
    #expect(
      file.status == 0 && file.stdout == "build\n" && file.stderr.contains("got[]"), "\(file.stdout)\(file.stderr)")
  }
}
