// Spill files: output past --output-limit goes to a private folder, safely, bounded, and is removed at exit unless a failure names it.
import Foundation
import TestSupport
import Testing

/// A workflow run with its own TMPDIR, so what taskrun leaves there can be looked at.
struct SpillWorkflow {
  let dir: URL
  let tmp: URL

  init(_ script: String) throws {
    dir = Scratch.root.appendingPathComponent("taskrun-spill-\(UUID().uuidString)")
    tmp = dir.appendingPathComponent("tmp")
    try FileManager.default.createDirectory(at: tmp, withIntermediateDirectories: true)
    try script.write(to: dir.appendingPathComponent("w.lua"), atomically: true, encoding: .utf8)
  }

  func start(_ arguments: [String] = [], environment: [String: String] = [:]) throws -> Binary.Started {
    try Binary.start(
      ["--progress", "plain", "--output-limit", "1"] + arguments + ["w.lua"], in: dir,
      environment: ["TMPDIR": tmp.path].merging(environment) { $1 })
  }

  func run(_ arguments: [String] = [], environment: [String: String] = [:]) throws -> Run {
    Binary.finish(try start(arguments, environment: environment), timeout: 120)
  }

  /// What is in TMPDIR (every entry, folders' contents included), as paths under it.
  func leftovers() -> [String] {
    let found = FileManager.default.enumerator(atPath: tmp.path)?.allObjects as? [String] ?? []
    return found.sorted()
  }

  /// Waits up to `seconds` for a spill file to appear under TMPDIR.
  func waitForSpill(_ seconds: Double) -> Bool {
    let deadline = Date().addingTimeInterval(seconds)
    while Date() < deadline {
      if leftovers().contains(where: { $0.hasSuffix(".stdout") }) { return true }
      usleep(50_000)
    }
    return false
  }
}

func mode(_ path: String) -> mode_t {
  var info = stat()
  return lstat(path, &info) == 0 ? info.st_mode & 0o7777 : 0
}

@Suite(.serialized) struct SpillTests {
  @Test func plantedSymlinksAndFoldersAreNeverFollowedOrReused() throws {
    let w = try SpillWorkflow(
      """
      local r = sh("head -c 3000000 /dev/zero | tr '\\\\0' a; printf END")
      assert(#r.stdout == 65536 and r.stdout:sub(-3) == "END", #r.stdout)
      local f = assert(io.open(r.stdout_file, "rb"))
      local all = f:read("a")
      f:close()
      assert(#all == 3000003, #all)
      operation { name = "loud", sh = "head -c 3000000 /dev/zero | tr '\\\\0' b; head -c 3000000 /dev/zero >&2" }
      """)
    // The victim: a file of the user's, and a folder of the attacker's that links to it under
    // every name a spill file could have.
    let victim = w.dir.appendingPathComponent("precious.txt")
    try "precious\n".write(to: victim, atomically: true, encoding: .utf8)
    let trap = w.dir.appendingPathComponent("trap")
    try FileManager.default.createDirectory(at: trap, withIntermediateDirectories: true)
    for n in 1...20 {
      for stream in ["stdout", "stderr"] {
        try FileManager.default.createSymbolicLink(
          atPath: trap.appendingPathComponent("command-\(n).\(stream)").path,
          withDestinationPath: victim.path)
      }
    }
    // Every folder name taskrun could predict: taskrun-PID for the next pids, alternately a
    // symlink to the trap and a real folder holding the same links.
    let last =
      Int(
        (try? String(contentsOfFile: "/proc/sys/kernel/ns_last_pid", encoding: .utf8))?
          .trimmingCharacters(in: .whitespacesAndNewlines) ?? "") ?? 0
    #expect(last > 0)
    for pid in (last + 1)...(last + 2000) {
      let name = w.tmp.appendingPathComponent("taskrun-\(pid)").path
      if pid % 2 == 0 {
        try FileManager.default.createSymbolicLink(atPath: name, withDestinationPath: trap.path)
      } else {
        try FileManager.default.createDirectory(atPath: name, withIntermediateDirectories: false)
        for n in 1...5 {
          for stream in ["stdout", "stderr"] {
            try FileManager.default.createSymbolicLink(
              atPath: name + "/command-\(n).\(stream)", withDestinationPath: victim.path)
          }
        }
      }
    }
    let run = try w.run()
    #expect(run.status == 0, "\(run.stdout)\(run.stderr)")
    #expect(try String(contentsOf: victim, encoding: .utf8) == "precious\n", "a planted link was followed")
    #expect(!run.stderr.contains("warning"), "\(run.stderr)")
  }

  /// A relative TMPDIR is taken from where taskrun started, also with -C: the path a failure
  /// names is where the file is (it was relative, read from the -C folder).
  @Test func aRelativeTmpdirIsTakenFromWhereTaskrunStarted() throws {
    let w = try SpillWorkflow("")
    let sub = w.dir.appendingPathComponent("sub")
    try FileManager.default.createDirectory(at: sub, withIntermediateDirectories: true)
    try "operation { name = \"loud\", sh = \"head -c 2000000 /dev/zero; exit 1\" }\n"
      .write(to: sub.appendingPathComponent("w.lua"), atomically: true, encoding: .utf8)
    let run = Binary.finish(
      try Binary.start(
        ["--progress", "plain", "--output-limit", "1", "-C", "sub", "w.lua"], in: w.dir,
        environment: ["TMPDIR": "tmp"]), timeout: 60)
    #expect(run.status == 1, "\(run.stdout)\(run.stderr)")
    let named = run.stderr.firstMatch(of: /all of its output: ([^)]*)\)/).map { String($0.1) } ?? ""
    #expect(named.hasPrefix(w.tmp.path + "/taskrun-"), "\(run.stderr)")
    #expect(FileManager.default.fileExists(atPath: named), "\(named)")
    #expect(!FileManager.default.fileExists(atPath: sub.appendingPathComponent("tmp").path), "made under -C's folder")
  }

  @Test func theFolderIsPrivateAndAResultsFileLastsAsLongAsTheRun() throws {
    let w = try SpillWorkflow(
      """
      local r = sh("head -c 3000000 /dev/zero")
      local folder = r.stdout_file:match("^(.*)/[^/]*$")
      print("file " .. r.stdout_file)
      print("modes " .. sh("stat -c '%a %s' '" .. folder .. "' '" .. r.stdout_file .. "'").stdout:gsub("\\n", " "))
      """)
    let run = try w.run()
    #expect(run.status == 0, "\(run.stdout)\(run.stderr)")
    let file = run.stdout.split(separator: "\n").first { $0.hasPrefix("file ") }.map { String($0.dropFirst(5)) } ?? ""
    #expect(file.hasPrefix(w.tmp.path + "/taskrun-"), "\(file)")
    // While the run lasted: the folder 0700, the file 0600 with all of the output.
    #expect(run.stdout.contains("modes 700 ") && run.stdout.contains(" 600 3000000 "), "\(run.stdout)")
    // After it: nothing names it in a failure, so it is gone, with its folder.
    #expect(w.leftovers() == [], "left after a successful run: \(w.leftovers())")
  }

  @Test func afterASuccessNothingIsLeftAndAfterAFailureTheFileIsNamedAndKept() throws {
    let ok = try SpillWorkflow(
      #"operation { name = "chatty", sh = "head -c 3000000 /dev/zero; head -c 2000000 /dev/zero >&2" }"#)
    let run = try ok.run()
    #expect(run.status == 0, "\(run.stdout)\(run.stderr)")
    #expect(ok.leftovers() == [], "left after a successful run: \(ok.leftovers())")

    let failing = try SpillWorkflow(#"operation { name = "chatty", sh = "head -c 3000000 /dev/zero; exit 3" }"#)
    let failed = try failing.run()
    #expect(failed.status == 1)
    let named = failed.stderr.firstMatch(of: /\(all of its output: ([^)]+)\)/).map { String($0.1) } ?? ""
    #expect(named.hasPrefix(failing.tmp.path + "/taskrun-"), "\(failed.stderr.prefix(2000))")
    #expect((try? FileManager.default.attributesOfItem(atPath: named)[.size] as? Int) == 3_000_000)
    #expect(failing.leftovers().filter { $0.contains(".std") }.count == 1, "\(failing.leftovers())")
  }

  @Test func theFileIsBoundedAndKeepsTheBeginningAndTheEnd() throws {
    let w = try SpillWorkflow(#"operation { name = "long", sh = "seq 1 1000000; exit 1" }"#)
    let run = try w.run(environment: ["TASKRUN_OUTPUT_FILE_LIMIT": "1"])
    #expect(run.status == 1)
    let message = run.stderr.firstMatch(of: /\(its output: ([^,]+), where (\d+) bytes of its middle were dropped\)/)
    #expect(message != nil, "\(run.stderr.prefix(2000))")
    guard let message else { return }
    let file = String(message.1)
    let data = try Data(contentsOf: URL(fileURLWithPath: file))
    #expect(data.count > 1 << 20 && data.count < (1 << 20) + 300, "the file holds \(data.count) bytes")
    let text = String(decoding: data, as: UTF8.self)
    #expect(text.hasPrefix("1\n2\n3\n") && text.hasSuffix("\n999999\n1000000\n"))
    let total = 6_888_896  // bytes of `seq 1 1000000`
    #expect(Int(message.2) == total - (1 << 20), "dropped \(message.2)")
    #expect(text.contains("[taskrun: \(message.2) bytes dropped here"))

    let bad = try w.run(environment: ["TASKRUN_OUTPUT_FILE_LIMIT": "0"])
    #expect(
      bad.status == 2
        && bad.stderr.contains("TASKRUN_OUTPUT_FILE_LIMIT must be a whole number of MB from 1 to 1048576 (got '0')"),
      "\(bad.stderr)")
  }

  /// `--output-file-limit MB` bounds the file as the variable does, and wins over it (even
  /// over a variable that would be refused); a value out of range is a usage error.
  @Test func theFileLimitIsAnOptionThatWinsOverTheVariable() throws {
    let w = try SpillWorkflow(#"operation { name = "long", sh = "seq 1 1000000; exit 1" }"#)
    for variable in ["1000", "0"] {
      let run = try w.run(["--output-file-limit", "1"], environment: ["TASKRUN_OUTPUT_FILE_LIMIT": variable])
      #expect(run.status == 1, "\(run.stderr.prefix(2000))")
      let message = run.stderr.firstMatch(of: /\(its output: ([^,]+), where (\d+) bytes of its middle were dropped\)/)
      #expect(message != nil, "TASKRUN_OUTPUT_FILE_LIMIT=\(variable): \(run.stderr.prefix(2000))")
      guard let message else { continue }
      let data = try Data(contentsOf: URL(fileURLWithPath: String(message.1)))
      #expect(data.count > 1 << 20 && data.count < (1 << 20) + 300, "the file holds \(data.count) bytes")
      #expect(Int(message.2) == 6_888_896 - (1 << 20), "dropped \(message.2)")
      #expect(String(decoding: data, as: UTF8.self).contains("bytes of 6888896 (--output-file-limit)]"))
    }
    for bad in ["0", "1048577", "x"] {
      let run = try w.run(["--output-file-limit", bad])
      #expect(run.status == 2, "\(bad): \(run.stderr)")
      #expect(
        bad == "x" || run.stderr.contains("--output-file-limit must be from 1 to 1048576 MB (got \(bad))"),
        "\(run.stderr)")
    }
  }

  @Test func withoutAUsableTmpdirItWarnsAndMemoryStaysBounded() throws {
    let w = try SpillWorkflow(
      """
      local r = sh("yes | head -c 300000000; printf END")
      assert(#r.stdout == 65536 and r.stdout:sub(-3) == "END", #r.stdout)
      assert(r.stdout_file == nil)
      operation { name = "loud", sh = "yes | head -c 3000000; exit 1" }
      """)
    // TMPDIR names a file: no folder can be made there (and none is made for a missing one).
    let notAFolder = w.dir.appendingPathComponent("file")
    try "x".write(to: notAFolder, atomically: true, encoding: .utf8)
    let missing = w.dir.appendingPathComponent("missing/tmp")
    for tmpdir in [notAFolder, missing] {
      let started = try w.start(environment: ["TMPDIR": tmpdir.path])
      var status: Int32 = 0
      var usage = rusage()
      let deadline = Date().addingTimeInterval(120)
      while wait4(started.child.pid, &status, WNOHANG, &usage) == 0 && Date() < deadline { usleep(50_000) }
      let run = Binary.finish(started, timeout: 1)
      #expect(status >> 8 == 1, "\(run.stdout)\(run.stderr)")
      #expect(
        run.stderr.contains("taskrun: warning: cannot keep command output past --output-limit in a file"),
        "\(run.stderr)")
      #expect(run.stderr.components(separatedBy: "taskrun: warning").count == 2, "warned once")
      #expect(run.stderr.contains("only the last 64 KiB of its stdout: 2934464 bytes were dropped"), "\(run.stderr)")
      // Bounded: the debug build's own peak is 50 to 100 MB whatever the size (base 18 MB,
      // read buffers and the allocator's caches; 70 MB alone), and under the whole suite's load
      // on 2 cores it was seen at 150.3 MB once; before, the whole output (300 MB) was kept.
      #expect(
        usage.ru_maxrss > 0 && usage.ru_maxrss < 200_000, "peak memory \(usage.ru_maxrss) KB for 300 MB of output")
    }
    #expect(
      !FileManager.default.fileExists(atPath: missing.deletingLastPathComponent().path), "TMPDIR's parent was created")
  }

  @Test func failFastAndCtrlCLeaveNoSpillFiles() throws {
    // Without -k a failure lets running operations finish: chatty ends after it.
    let w = try SpillWorkflow(
      """
      operation { name = "chatty", sh = "head -c 3000000 /dev/zero; sleep 3" }
      operation { name = "breaks", sh = "sleep 1; exit 1" }
      """)
    let stopped = try w.run()
    #expect(stopped.status == 1, "\(stopped.stdout)\(stopped.stderr)")
    #expect(stopped.stderr.contains("FAILED    breaks"))
    #expect(w.leftovers() == [], "left after a fail-fast stop: \(w.leftovers())")

    let interrupted = try SpillWorkflow(#"operation { name = "chatty", sh = "head -c 3000000 /dev/zero; sleep 30" }"#)
    let started = try interrupted.start()
    #expect(interrupted.waitForSpill(60), "the output never reached a file")
    kill(started.child.pid, SIGINT)
    let run = Binary.finish(started, timeout: 30)
    #expect(run.status == 130, "\(run.stdout)\(run.stderr)")
    #expect(interrupted.leftovers() == [], "left after Ctrl-C: \(interrupted.leftovers())")
  }

  /// A timeout fails the operation as a bad exit status does: its error names the file, which stays.
  @Test func aTimedOutCommandNamesItsFileAndKeepsIt() throws {
    let w = try SpillWorkflow(#"operation { name = "slow", timeout = 2, sh = "head -c 3000000 /dev/zero; sleep 30" }"#)
    let run = try w.run()
    #expect(run.status == 1, "\(run.stdout)\(run.stderr)")
    let named =
      run.stderr.firstMatch(of: /timed out after 2 s \(all of its output: ([^)]+)\)/).map { String($0.1) } ?? ""
    #expect(named.hasPrefix(w.tmp.path + "/taskrun-"), "\(run.stderr.prefix(2000))")
    #expect(FileManager.default.fileExists(atPath: named), "the file it names is gone: \(w.leftovers())")
    #expect(w.leftovers().filter { $0.contains(".std") }.count == 1, "\(w.leftovers())")

    // The same for a body's sh() that its operation's timeout stops.
    let body = try SpillWorkflow(
      #"operation { name = "slow", timeout = 2, run = function() sh("head -c 3000000 /dev/zero; sleep 30") end }"#)
    let ran = try body.run()
    #expect(ran.status == 1, "\(ran.stdout)\(ran.stderr)")
    let file =
      ran.stderr.firstMatch(of: /slow: timed out after 2 s \(all of its output: ([^)]+)\)/).map { String($0.1) } ?? ""
    #expect(file.hasPrefix(body.tmp.path + "/taskrun-"), "\(ran.stderr.prefix(2000))")
    #expect(FileManager.default.fileExists(atPath: file), "the file it names is gone: \(body.leftovers())")
  }

  /// A 3 MB line reaches `--events` in 64 KiB pieces, the same on every run, and the failure
  /// display counts the same earlier lines.
  @Test func aLongLineIsPassedOnIn64KiBPieces() throws {
    let w = try SpillWorkflow(
      #"operation { name = "bad", sh = "head -c 3000000 /dev/zero | tr '\\0' b; echo; echo END; exit 1" }"#)
    let piece = 64 << 10
    let expected =
      Array(repeating: piece, count: 3_000_000 / piece) + [3_000_000 % piece, 3]  // the rest, then END
    for attempt in 1...3 {
      let run = try w.run(["--events", "ev\(attempt).json"])
      #expect(run.status == 1, "\(run.stdout)\(run.stderr.prefix(2000))")
      let events = try String(contentsOf: w.dir.appendingPathComponent("ev\(attempt).json"), encoding: .utf8)
      let text = try events.split(separator: "\n").compactMap { line -> String? in
        let event = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
        return event?["event"] as? String == "output" ? event?["text"] as? String : nil
      }.joined()
      let lines = text.split(separator: "\n", omittingEmptySubsequences: false).dropLast()
      #expect(lines.map(\.utf8.count) == expected, "attempt \(attempt)")
      #expect(lines.last == "END")
      // The FAILED line shows the last 3 lines.
      #expect(run.stderr.contains("| … \(expected.count - 3) earlier lines"), "\(run.stderr.suffix(3000))")
      #expect(!run.stderr.contains("    | \n"), "no empty line is made up")
    }
  }
}

/// A spill file on every way out of a run, the run's bound on all of them together, and a
/// file whose writing fails midway (`ulimit -f` stands for a full disk: both fail the write).
@Suite(.serialized) struct SpillExitTests {
  /// Runs the workflow with `ulimit -f KB` on taskrun alone (its output goes through a pipe
  /// to `cat`, so taskrun's own report is not limited); stderr is merged into stdout.
  func runLimited(_ w: SpillWorkflow, fileLimitKB: Int, _ arguments: [String] = []) throws -> Run {
    let script = "(ulimit -f \(fileLimitKB); exec \"$0\" \"$@\") 2>&1 | cat; exit ${PIPESTATUS[0]}"
    return Binary.finish(
      try Binary.start(
        ["-c", script, Binary.url.path, "--progress", "plain", "--output-limit", "1"]
          + arguments + ["w.lua"],
        in: w.dir, environment: ["TMPDIR": w.tmp.path], program: "/bin/bash"),
      timeout: 120)
  }

  @Test func aSpillFilePastUlimitIsReportedIncompleteAndTaskrunLives() throws {
    let w = try SpillWorkflow(
      """
      -- a command still gets SIGXFSZ at its default: head dies of it (128 + 25)
      print("head: " .. sh("head -c 2000000 /dev/zero > big; echo $?").stdout)
      operation { name = "big", sh = "head -c 3000000 /dev/zero | tr '\\\\0' b; exit 3" }
      """)
    let run = try runLimited(w, fileLimitKB: 1024)
    #expect(run.status == 1, "taskrun ended with \(run.status): \(run.stdout.prefix(3000))")
    #expect(run.stdout.contains("head: 153"), "\(run.stdout.prefix(3000))")
    #expect(
      run.stdout.contains("taskrun: warning: cannot keep command output past --output-limit in a file (")
        && run.stdout.contains(": File too large)"), "\(run.stdout.prefix(3000))")
    let message = run.stdout.firstMatch(
      of:
        /\(its output: ([^,]+), incomplete: writing it failed \(File too large\): it holds only the first (\d+) bytes of 3000000\)/
    )
    #expect(message != nil, "\(run.stdout.prefix(3000))")
    #expect(!run.stdout.contains("of its middle were dropped"), "\(run.stdout.prefix(3000))")
    #expect(run.stdout.contains("0 succeeded, 1 failed"), "no summary: \(run.stdout.suffix(2000))")
    guard let message else { return }
    // The failure names the file, so it stays, holding exactly the beginning it says.
    let data = try Data(contentsOf: URL(fileURLWithPath: String(message.1)))
    #expect(data.count == Int(message.2) && data.count == 1 << 20 && data.allSatisfy { $0 == UInt8(ascii: "b") })
    #expect(w.leftovers().filter { $0.contains(".std") }.count == 1, "\(w.leftovers())")
  }

  @Test func aSpillFileThatGotNothingIsRemovedAndTheOutputsEndIsKept() throws {
    let w = try SpillWorkflow(
      """
      operation { name = "ok", sh = "head -c 3000000 /dev/zero" }
      operation { name = "bad", after = "ok", sh = "head -c 3000000 /dev/zero | tr '\\\\0' b; exit 3" }
      """)
    let run = try runLimited(w, fileLimitKB: 0)
    #expect(run.status == 1, "taskrun ended with \(run.status): \(run.stdout.prefix(3000))")
    #expect(run.stdout.contains("File too large)"), "\(run.stdout.prefix(3000))")
    #expect(
      run.stdout.contains("(its output: only the last 64 KiB of its stdout: 2934464 bytes were dropped)"),
      "\(run.stdout.prefix(3000))")
    #expect(w.leftovers() == [], "left: \(w.leftovers())")
  }

  @Test func noExitPathLeavesAFileNoFailureNames() throws {
    // A body holding its sh() result, stopped by each signal.
    for signal in [SIGINT, SIGTERM, SIGHUP] {
      let w = try SpillWorkflow(
        """
        operation { name = "holds", run = function() local r = sh("head -c 3000000 /dev/zero"); sleep(30) end }
        operation { name = "waits", sh = "sleep 30" }
        """)
      let started = try w.start()
      #expect(w.waitForSpill(60), "the output never reached a file")
      usleep(300_000)
      kill(started.child.pid, signal)
      let run = Binary.finish(started, timeout: 30)
      #expect(run.status == 130, "signal \(signal): \(run.stdout)\(run.stderr)")
      #expect(w.leftovers() == [], "left after signal \(signal): \(w.leftovers())")
    }
    // Success, with results in a loop and at the top level; os.exit; a fail-fast stop that
    // leaves a body's discarded result behind.
    let scripts = [
      (
        0,
        """
        operation { name = "loop", run = function() for i = 1, 5 do local r = sh("head -c 2000000 /dev/zero") end end }
        local top = sh("head -c 2000000 /dev/zero")
        """
      ),
      (3, #"local r = sh("head -c 2000000 /dev/zero"); os.exit(3)"#),
      (
        1,
        """
        operation { name = "discards", run = function() sh("head -c 3000000 /dev/zero"); sleep(2) end }
        operation { name = "breaks", sh = "sleep 0.5; exit 1" }
        """
      )
    ]
    for (status, script) in scripts {
      let w = try SpillWorkflow(script)
      let run = try w.run()
      #expect(run.status == Int32(status), "\(script): \(run.stdout)\(run.stderr)")
      #expect(w.leftovers() == [], "left after \(script): \(w.leftovers())")
    }
  }

  @Test func aFailureThatNamesAResultsFileKeepsItAndSaysWhere() throws {
    let w = try SpillWorkflow(
      """
      operation { name = "checked", run = function() sh("head -c 3000000 /dev/zero; exit 4") end }
      operation { name = "quotes", run = function()
        local r = sh("head -c 2000000 /dev/zero | tr '\\\\0' q")
        local also = sh("head -c 2000000 /dev/zero")
        error("see " .. r.stdout_file)
      end }
      """)
    let run = try w.run(["-k"])
    #expect(run.status == 1, "\(run.stdout)\(run.stderr)")
    let failures = run.stderr.components(separatedBy: "Failures:").last ?? ""
    let checked = failures.firstMatch(of: /command failed: [^\n]*exited with status 4 \(all of its output: ([^)]+)\)/)
    let quoted = failures.firstMatch(of: /see ([^\s]+\.stdout)/)
    #expect(checked != nil && quoted != nil, "\(run.stderr.prefix(3000))")
    guard let checked, let quoted else { return }
    #expect((try? FileManager.default.attributesOfItem(atPath: String(checked.1))[.size] as? Int) == 3_000_000)
    #expect((try? FileManager.default.attributesOfItem(atPath: String(quoted.1))[.size] as? Int) == 2_000_000)
    // The result no failure names is gone.
    #expect(w.leftovers().filter { $0.contains(".std") }.count == 2, "\(w.leftovers())")
  }

  @Test func allFilesOfARunTogetherStayWithinTheirBound() throws {
    let w = try SpillWorkflow(
      """
      local sizes, filed, unfiled = 0, 0, 0
      for i = 1, 10 do
        local r = sh("head -c 2000000 /dev/zero; printf END")
        assert(#r.stdout == 65536 and r.stdout:sub(-3) == "END")
        if r.stdout_file then
          local f = assert(io.open(r.stdout_file, "rb"))
          sizes = sizes + f:seek("end")
          f:close()
          filed = filed + 1
        else
          unfiled = unfiled + 1
        end
      end
      print("filed " .. filed .. " unfiled " .. unfiled .. " bytes " .. sizes)
      """)
    let run = try w.run(["--output-file-limit", "1"])
    #expect(run.status == 0, "\(run.stdout)\(run.stderr)")
    let counts = run.stdout.firstMatch(of: /filed (\d+) unfiled (\d+) bytes (\d+)/)
    #expect(counts != nil, "\(run.stdout)")
    guard let counts else { return }
    #expect(Int(counts.1)! >= 3 && Int(counts.2)! >= 1, "\(run.stdout)")
    #expect(Int(counts.3)! <= 4 << 20, "the files hold \(counts.3) bytes, past 4 × --output-file-limit")
    #expect(run.stderr.contains("this run's output files reached 4 MB, 4 × --output-file-limit"), "\(run.stderr)")
    #expect(run.stderr.components(separatedBy: "taskrun: warning").count == 2, "warned once: \(run.stderr)")
    #expect(w.leftovers() == [], "left: \(w.leftovers())")
  }
}
