// Commands: direct exec versus the shell, and real processes through the runner.
import Foundation
import TestSupport
import Testing

@testable import TaskEngine

@Suite struct CommandSpecTests {
  @Test func plainCommandsRunDirectlyLikeMake() {
    #expect(CommandSpec(.shell("cc -c a.c -o a.o")).argv == ["cc", "-c", "a.c", "-o", "a.o"])
  }

  @Test func blanksSeparateWordsWhereverTheyAre() {
    #expect(CommandSpec(.shell("  cc\t-c   a.c\t")).argv == ["cc", "-c", "a.c"])
    #expect(CommandSpec(.shell("touch café.txt ü")).argv == ["touch", "café.txt", "ü"])
    #expect(CommandSpec(.shell(" \t ")).argv == ["/bin/sh", "-c", " \t "])
    #expect(CommandSpec(.shell("true #")).argv == ["/bin/sh", "-c", "true #"])
  }

  @Test(arguments: ["echo a | wc", "ls *.c", "echo $HOME", "a && b", "X=1 make", "echo 'q'", "cd dir", "exit 3"])
  func shellSyntaxGoesThroughBinSh(_ line: String) {
    #expect(CommandSpec(.shell(line)).argv == ["/bin/sh", "-c", line])
  }

  @Test func argvIsNeverReinterpreted() {
    #expect(CommandSpec(.argv(["echo", "$HOME | x"])).argv == ["echo", "$HOME | x"])
  }

  @Test func displayQuotesArgvForAShellAndShortensScripts() {
    #expect(CommandSpec(.argv(["echo", "it's here", "plain"])).display == #"echo 'it'\''s here' plain"#)
    #expect(CommandSpec(.shell("set -e\nmake\nmake install")).display == "set -e …")
  }

  /// Reports print durations without Foundation's formatter; they read as printf's would.
  @Test func durationsReadAsPrintfWouldPrintThem() {
    // 10,000 values from 0 to 1000 s, each 0.03 ms past a tenth of a millisecond: never an exact
    // tie, where printf (the exact binary value) and decimal rounding may differ.
    for k in stride(from: 0, to: 10_000_000, by: 997) {
      let value = Double(k) / 1e4 + 0.00003
      for digits in 0...3 { #expect(formatFixed(value, digits) == String(format: "%.\(digits)f", value)) }
    }
    #expect(formatFixed(0, 2) == "0.00" && formatFixed(-0.004, 2) == "0.00" && formatFixed(-1.5, 1) == "-1.5")
    #expect(formatFixed(.infinity, 2) == "inf" && formatFixed(0.999, 2) == "1.00" && formatFixed(59.96, 1) == "60.0")
    #expect(formatSeconds(1.5) == "1.50 s" && formatSeconds(2) == "2 s" && formatSeconds(125) == "2 min 5 s")
  }
}

@Suite struct ProcessTests {
  /// Runs commands on a real clock and returns their results by name.
  func run(_ specs: [String: CommandSpec], jobs: Int = 4, configure: (Scheduler) -> Void = { _ in })
    throws -> [String: OperationNode]
  {
    let s = Scheduler(jobs: jobs)
    s.keepGoing = true
    var ops: [String: OperationNode] = [:]
    for (name, spec) in specs.sorted(by: { $0.key < $1.key }) {
      ops[name] = try s.makeOperation(name: name, body: CommandBody(spec))
    }
    configure(s)
    try s.runAll()
    return ops
  }

  @Test func capturesStatusStdoutAndStderrSeparately() throws {
    let ops = try run(["x": CommandSpec(.shell("echo out; echo err >&2; exit 3"))])
    let x = try #require(ops["x"])
    #expect(x.commandResult == CommandResult(status: 3, stdout: "out\n", stderr: "err\n"))
    #expect(x.failed && x.error == "exited with status 3: echo out; echo err >&2; exit 3")
    #expect(x.output.contains("out\n") && x.output.contains("err\n"))
  }

  @Test func environmentAndDirectoryApply() throws {
    let ops = try run([
      "x": CommandSpec(
        .argv(["sh", "-c", "echo $GREETING; pwd"]),
        environment: ["GREETING": "hi"], directory: "/tmp")
    ])
    #expect(ops["x"]?.commandResult?.stdout == "hi\n/tmp\n")
  }

  @Test func aCommandsOwnPathIsWhereItsProgramIsFound() throws {
    let bin = Scratch.root.appendingPathComponent("bin-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: bin, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: bin) }
    try Scratch.writeProgram("#!/bin/sh\necho found\n", to: bin.appendingPathComponent("only-here"))
    let ops = try run([
      "own": CommandSpec(.argv(["only-here"]), environment: ["PATH": bin.path + ":/usr/bin:/bin"]),
      "taskruns": CommandSpec(.argv(["only-here"]))
    ])
    #expect(ops["own"]?.commandResult?.stdout == "found\n")
    #expect(ops["taskruns"]?.commandResult?.status == 127, "taskrun's own PATH does not have it")
  }

  @Test func aMissingProgramFailsWithStatus127AndSaysWhy() throws {
    let ops = try run(["x": CommandSpec(.argv(["no-such-program-xyz", "arg"]))])
    #expect(ops["x"]?.commandResult?.status == 127)
    #expect(ops["x"]?.commandResult?.stderr == "no-such-program-xyz: command not found\n")
    #expect(ops["x"]?.error == "could not start (no-such-program-xyz: command not found): no-such-program-xyz arg")
    #expect(ops["x"]?.output == "no-such-program-xyz: command not found\n")
  }

  @Test func aMissingDirectoryIsNamed() throws {
    let ops = try run(["x": CommandSpec(.argv(["true"]), directory: "/no/such/dir")])
    #expect(ops["x"]?.commandResult?.stderr == "cwd '/no/such/dir': no such directory\n")
  }

  @Test func largeOutputIsCapturedWhole() throws {
    let ops = try run(["x": CommandSpec(.shell("seq 1 200000"))])
    #expect(ops["x"]?.commandResult?.stdout.split(separator: "\n").count == 200000)
  }

  /// A command that closes its output goes on running: its end is its exit, not its pipes'.
  @Test func aCommandThatClosesItsOutputRunsToItsExit() throws {
    let start = Date()
    let ops = try run(["x": CommandSpec(.shell("echo before; exec >&- 2>&-; sleep 0.3; exit 4"))])
    #expect(ops["x"]?.commandResult == CommandResult(status: 4, stdout: "before\n", stderr: ""))
    #expect(Date().timeIntervalSince(start) >= 0.3)
  }

  /// What a command writes as it exits is read to the end, from each stream.
  @Test func theLastOutputBeforeAnExitIsKept() throws {
    let ops = try run(
      Dictionary(
        uniqueKeysWithValues: (0..<20).map {
          ("x\($0)", CommandSpec(.shell("seq 1 \($0 * 1000); seq 1 \($0) >&2")))
        }))
    for i in 0..<20 {
      #expect(ops["x\(i)"]?.commandResult?.stdout.split(separator: "\n").count == i * 1000)
      #expect(ops["x\(i)"]?.commandResult?.stderr.split(separator: "\n").count == i)
    }
  }

  @Test func cancellingACommandKillsItsWholeProcessGroup() throws {
    let marker = "/tmp/taskrun-test-\(getpid())-\(UUID().uuidString)"
    let start = Date()
    let ops = try run(["x": CommandSpec(.shell("(sleep 2; touch \(marker)) & sleep 30"))]) { s in
      s.after(0.3) { s.cancel(s.operation(named: "x")!, reason: "stop") }
    }
    #expect(ops["x"]?.outcome == .cancelled && ops["x"]?.error == "stop")
    #expect(Date().timeIntervalSince(start) < 5)
    Thread.sleep(forTimeInterval: 2.5)
    #expect(!FileManager.default.fileExists(atPath: marker), "the background child outlived the cancel")
  }

  @Test func aCommandIgnoringSIGTERMIsKilledAfterTheGrace() throws {
    let ops = try run(["x": CommandSpec(.argv(["sh", "-c", "trap '' TERM; sleep 30"]))]) { s in
      s.killGrace = 0.3
      s.after(0.2) { s.cancel(s.operation(named: "x")!) }
    }
    #expect(ops["x"]?.commandResult?.status == 128 + SIGKILL)
    #expect(ops["x"]?.outcome == .cancelled)
  }

  @Test func commandsRunInParallelUpToTheJobCount() throws {
    // Each command announces itself, waits, then counts the others that started meanwhile.
    let dir = Scratch.root.appendingPathComponent("taskrun-\(UUID().uuidString)").path
    try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(atPath: dir) }
    let specs = Dictionary(
      uniqueKeysWithValues: (0..<3).map {
        ("s\($0)", CommandSpec(.shell("touch \(dir)/\($0); sleep 0.5; ls \(dir) | wc -l")))
      })
    let ops = try run(specs, jobs: 3)
    #expect(
      ops.values.map { $0.commandResult?.stdout.trimmingCharacters(in: .whitespacesAndNewlines) } == ["3", "3", "3"])
  }
}
