// Text from outside (the command line, a command's output, the cluster) reaches the terminal escaped: it cannot wipe or rewrite taskrun's lines.
import Foundation
import TestSupport
import Testing

@Suite struct TerminalTextTests {
  /// `text` without its SGR sequences (colours, the one kind a failure report keeps) holds no ESC.
  static func holdsNoEscapeButColours(_ text: String) -> Bool {
    !text.replacing(/\x{1B}\[[0-9;:]*m/, with: "").contains("\u{1B}")
  }

  func project(_ script: String, name: String = "taskrun.lua") throws -> URL {
    let dir = Scratch.root.appendingPathComponent("taskrun-text-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
    try script.write(to: dir.appendingPathComponent(name), atomically: true, encoding: .utf8)
    return dir
  }

  @Test func wordsOfTheCommandLineAreShownEscaped() throws {
    let dir = try project(#"operation { name = "a", sh = "true" }"#)
    for (arguments, shown) in [
      (["x\u{1B}[2J"], "unknown target 'x\\27[2J'"),
      (["a\nb\u{202E}c"], "unknown target 'a\\nb\\u{202E}c'"),
      (["help", "\u{1B}]0;title\u{07}"], "help: no subcommand '\\27]0;title\\7'"),
      (["--x\u{1B}[2J"], "'--x\\27[2J'"),
      (["-C", "\u{1B}[2J"], "-C \\27[2J: cannot change to that folder")
    ] {
      let run = try Binary.run(arguments, in: dir)
      #expect(run.status == 2, "\(arguments): \(run.stderr)")
      #expect(run.stderr.contains(shown), "\(arguments): \(run.stderr.debugDescription)")
      #expect(
        !run.stderr.contains("\u{1B}") && !run.stderr.contains("\u{202E}"),
        "\(arguments): \(run.stderr.debugDescription)")
    }
    // An error the script raises at its top level, with what a command printed in it.
    let script = try project(#"error("read: " .. sh("printf 'x\\033[2J\\r'").stdout, 0)"#, name: "w.lua")
    let run = try Binary.run(["w.lua"], in: script)
    #expect(run.status == 2 && run.stderr.contains("taskrun: read: x\\27[2J\\r"), "\(run.stderr.debugDescription)")
  }

  /// A failing command's lines keep their colours, but a cursor move, an erase, a carriage
  /// return or a title is shown escaped: it cannot erase the report or the summary.
  @Test func aFailureReportShowsOutputWithoutItsCursorMovesAndErasures() throws {
    let dir = try project(
      #"""
      operation { name = "loud", sh = [[printf 'keep\n\033[31mred\033[0m\n\033[8mhidden\nx\033[1A\033[2K\033[1A\033[2Ky\n\033]0;title\007\n'; exit 1]] }
      operation { name = "quoted", run = function() sh([[printf 'bad\033[2J\342\200\256\n' >&2; exit 3]]) end }
      """#)
    for verbose in [false, true] {
      let run = try Binary.run(["--progress", "plain", "-k"] + (verbose ? ["-v"] : []), in: dir)
      #expect(run.status == 1)
      let all = run.stdout + run.stderr
      #expect(Self.holdsNoEscapeButColours(all) && !all.contains("\u{202E}"), "\(all.debugDescription)")
      let prefix = verbose ? "[loud] " : "    | "
      for line in [
        "keep", "\u{1B}[31mred\u{1B}[0m", "\u{1B}[8mhidden\u{1B}[0m", "x\\27[1A\\27[2K\\27[1A\\27[2Ky",
        "\\27]0;title\\7"
      ] {
        #expect(all.contains(prefix + line + "\n"), "\(line.debugDescription) in \(all.debugDescription)")
      }
      #expect(run.stderr.contains("exited with status 3 (bad\\27[2J\\u{202E})"), "\(run.stderr.debugDescription)")
      #expect(run.stdout.contains("0 succeeded, 2 failed"))
    }
  }

  /// The REPL's `:why` quotes an operation's error (here a command's stderr line) and the
  /// name typed; neither reaches the terminal raw.
  @Test func theReplsWhyShowsErrorsAndNamesEscaped() throws {
    let run = Binary.finish(
      try Binary.start(
        ["repl"],
        input: """
          x = operation { name = "bad", run = function() sh([[printf 'e\\033[2J\\n' >&2; exit 1]]) end }
          local ok = pcall(run, x)
          :why bad
          :why b\u{1B}[2J
          """))
    let all = run.stdout + run.stderr
    #expect(!all.contains("\u{1B}"), "\(all.debugDescription)")
    #expect(
      run.stdout.contains("'bad' finished failed: stdin:1: command failed: ")
        && run.stdout.contains("exited with status 1 (e\\27[2J)"), "\(all)")
    #expect(run.stdout.contains("no operation named 'b\\27[2J'"), "\(all)")
  }

  /// `taskrun test`'s report: a failure's message that quotes a command's output, and a
  /// test's name built from it, are shown escaped.
  @Test func aTestFailureQuotingOutputIsShownEscaped() throws {
    let dir = try project(
      """
      describe("suite", function()
        local out = sh([[printf 'x\\033[2J']]).stdout
        it("reads " .. out, function() assert.are.equal("y", out) end)
      end)
      """, name: "odd_spec.lua")
    for verbose in [false, true] {
      let run = try Binary.run(["test"] + (verbose ? ["-v"] : []) + ["odd_spec.lua"], in: dir)
      #expect(run.status == 1, "\(run.stdout)\(run.stderr)")
      #expect(!(run.stdout + run.stderr).contains("\u{1B}"), "\((run.stdout + run.stderr).debugDescription)")
      #expect(run.stdout.contains("suite reads x\\27[2J"), "\(run.stdout)")
      #expect(verbose || run.stdout.contains("(string) 'x\\27[2J'"), "\(run.stdout)")
    }
    // TAP: a line format (a newline in a name would end the line), YAML messages: escaped too.
    let tap = try Binary.run(["test", "--tap", "odd_spec.lua"], in: dir)
    #expect(tap.status == 1 && !tap.stdout.contains("\u{1B}"), "\(tap.stdout.debugDescription)")
    #expect(tap.stdout.contains("not ok 1 - suite reads x\\\\27[2J\n"), "\(tap.stdout)")
    #expect(tap.stdout.contains("    (string) 'x\\27[2J'\n"), "\(tap.stdout)")
  }

  /// `--events` keeps a command's text exactly, but no control reaches the file raw: JSON's
  /// own escapes, and `\u` for DEL, C1 and bidirectional controls, which JSON allows raw.
  @Test func eventsCarryTheTextEscapedAndDecodeToIt() throws {
    let dir = try project(#"operation { name = "odd", sh = [[printf 'a\033[2J\177\302\233\342\200\256z\n']] }"#)
    let run = try Binary.run(["--progress", "none", "--events", "e.ndjson"], in: dir)
    #expect(run.status == 0, "\(run.stderr)")
    let data = try Data(contentsOf: dir.appendingPathComponent("e.ndjson"))
    let text = String(decoding: data, as: UTF8.self)
    #expect(
      !text.unicodeScalars.contains {
        $0.value < 0x0A || (0x0B..<0x20).contains($0.value) || (0x7F...0x9F).contains($0.value) || $0 == "\u{202E}"
      },
      "\(text.debugDescription)")
    #expect(text.contains(#""a\u001b[2J\u007f\u009b\u202ez\n""#), "\(text)")
    let lines = try text.split(separator: "\n").map {
      try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
    }
    #expect(
      lines.contains {
        $0?["event"] as? String == "output" && $0?["text"] as? String == "a\u{1B}[2J\u{7F}\u{9B}\u{202E}z\n"
      },
      "\(text)")
  }

  /// Slurm's reason for a pending job, from squeue's output, in the live row.
  @Test(.enabled(if: TerminalTests.hasTmux)) func theClustersQueueReasonIsShownEscaped() throws {
    let marker = Scratch.root.appendingPathComponent("taskrun-cancelled-\(UUID().uuidString)").path
    let (dir, environment) = try FakeSlurmTests().fake([
      "sbatch": "echo 55",
      "squeue": "[ -f \(marker) ] && echo '55|CANCELLED|None|' || printf '55|PENDING|Res\\033[2J\\033[1;1Hources|\\n'",
      "scancel": "touch \(marker)", "srun": "exit 1"
    ])
    try #"operation { name = "big", queue = queue { name = "hpc", executor = "slurm" }, timeout = 3, sh = "true" }"#
      .write(to: dir.appendingPathComponent("w.lua"), atomically: true, encoding: .utf8)
    let session = try TerminalSession(
      "PATH=\(environment["PATH"]!) TASKRUN_SLURM_POLL=0.1 \(Binary.url.path) w.lua", in: dir)
    let queued = session.wait { $0.contains("queued on slurm (Res") }
    #expect(queued.contains("⧗ big  queued on slurm (Res\\27[2J\\27[1;1Hources)"), "\(queued)")
    let done = session.wait { $0.contains("EXIT=") }
    #expect(done.contains("timed out after 3 s") && done.contains("EXIT=1"), "\(done)")
  }
}
