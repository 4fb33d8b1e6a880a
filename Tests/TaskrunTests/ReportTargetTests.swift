// --events and --trace: a report path that is the script, or a FIFO nobody reads, is refused at start.
import Foundation
import Glibc
import TestSupport
import Testing

@Suite struct ReportTargetTests {
  static let script = #"operation { name = "a", sh = "true" }"# + "\n"

  func folder() throws -> URL {
    let dir = Scratch.root.appendingPathComponent("taskrun-targets-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: dir.appendingPathComponent("sub"), withIntermediateDirectories: true)
    for name in ["e.lua", "sub/taskrun.lua"] {
      try Self.script.write(to: dir.appendingPathComponent(name), atomically: true, encoding: .utf8)
    }
    try FileManager.default.createSymbolicLink(
      atPath: dir.appendingPathComponent("link.json").path, withDestinationPath: "e.lua")
    try FileManager.default.createSymbolicLink(
      atPath: dir.appendingPathComponent("dangling.json").path, withDestinationPath: "new.lua")
    return dir
  }

  /// The report would truncate the script before it is loaded: refused (exit 2), the script
  /// intact, whichever way the path leads to it (as written, `..`, a link, `-f`, `-C`, a
  /// dangling link to a script that does not exist yet, which is then not created).
  @Test(arguments: ["--events", "--trace"])
  func aReportFileThatIsTheScriptIsRefused(_ option: String) throws {
    let dir = try folder()
    let cases: [[String]] = [
      [option, "e.lua", "e.lua"], [option, "./sub/../e.lua", "e.lua"], [option, "link.json", "-f", "e.lua"],
      [option, "sub/taskrun.lua", "-C", "sub"], [option, "dangling.json", "new.lua"]
    ]
    for arguments in cases {
      let run = try Binary.run(["-q"] + arguments, in: dir)
      #expect(run.status == 2, "\(arguments): \(run.stdout)\(run.stderr)")
      #expect(run.stderr.contains("taskrun: \(option) '\(arguments[1])' is the script"), "\(arguments): \(run.stderr)")
      for name in ["e.lua", "sub/taskrun.lua"] {
        #expect(
          try String(contentsOf: dir.appendingPathComponent(name), encoding: .utf8) == Self.script,
          "\(arguments): \(name)")
      }
      #expect(!FileManager.default.fileExists(atPath: dir.appendingPathComponent("new.lua").path), "\(arguments)")
    }
    // Another file beside the script, and a relative path under -C, still relative to where
    // taskrun started, are written.
    let apart = try Binary.run(["-q", option, "report.json", "-C", "sub"], in: dir)
    #expect(apart.status == 0, "\(apart.stderr)")
    #expect(FileManager.default.fileExists(atPath: dir.appendingPathComponent("report.json").path))
  }

  /// A FIFO with no reader used to hold taskrun in open(2) for ever, deaf to Ctrl-C: it is
  /// refused at once with the reason.
  @Test(arguments: [("--events", "events"), ("--trace", "the trace")])
  func aFifoWithoutAReaderIsRefusedAtOnce(_ option: String, _ what: String) throws {
    let dir = try folder()
    #expect(mkfifo(dir.appendingPathComponent("fifo").path, 0o600) == 0)
    let run = Binary.finish(try Binary.start(["-q", option, "fifo", "e.lua"], in: dir), timeout: 20)
    #expect(run.status == 2, "\(run.stdout)\(run.stderr)")
    #expect(run.stderr.contains("taskrun: cannot write \(what) to 'fifo': no reader on the FIFO"), "\(run.stderr)")
  }

  /// `taskrun test`'s JUnit file goes through the same open: a FIFO without a reader is
  /// refused at once, and a link is written through (both were replaced by a regular file
  /// renamed over them: `-Xoutput /dev/stderr` run as root replaced /dev/stderr).
  @Test func theJUnitReportIsWrittenInPlace() throws {
    let dir = try folder()
    try #"describe("a", function() it("works", function() assert.is_true(true) end) end)"#
      .write(to: dir.appendingPathComponent("a_spec.lua"), atomically: true, encoding: .utf8)
    #expect(mkfifo(dir.appendingPathComponent("fifo").path, 0o600) == 0)
    let fifo = Binary.finish(
      try Binary.start(["test", "-o", "junit", "-Xoutput", "fifo", "a_spec.lua"], in: dir), timeout: 20)
    #expect(
      fifo.status == 2 && fifo.stderr.contains("cannot write the JUnit report to 'fifo': no reader on the FIFO"),
      "\(fifo.stderr)")
    var info = stat()
    #expect(
      lstat(dir.appendingPathComponent("fifo").path, &info) == 0 && info.st_mode & S_IFMT == S_IFIFO,
      "the FIFO is still one")
    try FileManager.default.createSymbolicLink(
      atPath: dir.appendingPathComponent("link.xml").path, withDestinationPath: "target.xml")
    let linked = try Binary.run(["test", "-o", "junit", "-Xoutput", "link.xml", "a_spec.lua"], in: dir)
    #expect(linked.status == 0, "\(linked.stderr)")
    #expect(
      try FileManager.default.destinationOfSymbolicLink(atPath: dir.appendingPathComponent("link.xml").path)
        == "target.xml")
    #expect(
      try String(contentsOf: dir.appendingPathComponent("target.xml"), encoding: .utf8).contains(
        #"tests="1" failures="0""#))
  }

  /// "-" is the file descriptor 2 itself: another name for it is the same file for both reports.
  @Test func standardErrorByAnotherNameIsTheSameFile() throws {
    let dir = try folder()
    for (events, trace) in [("/proc/self/fd/2", "-"), ("-", "/dev/fd/2")] {
      let run = try Binary.run(["-q", "--events", events, "--trace", trace, "e.lua"], in: dir)
      #expect(
        run.status == 2 && run.stderr.contains("--events and --trace name the same file"),
        "\(events) \(trace): \(run.stderr)")
    }
  }

  /// The null device keeps nothing: both reports may be thrown away there, by any name
  /// (`/dev/null`, a link to it), and the run goes on.
  @Test func theNullDeviceServesBothReports() throws {
    let dir = try folder()
    try FileManager.default.createSymbolicLink(
      atPath: dir.appendingPathComponent("null").path, withDestinationPath: "/dev/null")
    for (events, trace) in [("/dev/null", "/dev/null"), ("/dev/null", "null")] {
      let run = try Binary.run(["-q", "--events", events, "--trace", trace, "e.lua"], in: dir)
      #expect(run.status == 0 && !run.stderr.contains("same file"), "\(events) \(trace): \(run.stderr)")
    }
  }
}
