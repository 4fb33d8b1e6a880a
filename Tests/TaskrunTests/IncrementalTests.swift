// Incremental runs through the binary: up to date, why, restat, depfiles, removed outputs, -B, -n, --no-store, the lock, a broken store, resume.
import Foundation
import TestSupport
import Testing

@testable import taskrun

@Suite struct IncrementalTests {
  /// A workflow folder with `build.lua` and `files`.
  func workflow(_ script: String, _ files: [String: String] = [:]) throws -> URL {
    var all = files
    all["build.lua"] = script
    let dir = try Scratch.folder("incremental", [:])
    for (name, text) in all { try write(text, dir, name) }
    return dir
  }

  func write(_ text: String, _ dir: URL, _ name: String) throws {
    let url = dir.appendingPathComponent(name)
    try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
    try text.write(to: url, atomically: false, encoding: .utf8)
  }

  func read(_ dir: URL, _ name: String) -> String? {
    try? String(contentsOf: dir.appendingPathComponent(name), encoding: .utf8)
  }

  /// One run; each operation's finish (outcome, why) from its events.
  func run(_ dir: URL, _ arguments: [String] = [], script: [String] = []) throws -> (
    run: Run, ops: [String: (outcome: String, why: String?)]
  ) {
    let events = dir.appendingPathComponent("events-\(UUID().uuidString).jsonl")
    let run = try Binary.run(
      ["--progress", "plain", "--events", events.path] + arguments + ["build.lua"]
        + (script.isEmpty ? [] : ["--"] + script),
      in: dir)
    var ops: [String: (String, String?)] = [:]
    for line in (try? String(contentsOf: events, encoding: .utf8))?.split(separator: "\n") ?? [] {
      guard let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
        object["event"] as? String == "op_finish", let name = object["operation"] as? String
      else { continue }
      ops[name] = (object["outcome"] as! String, object["why"] as? String)
    }
    try? FileManager.default.removeItem(at: events)
    return (run, ops)
  }

  static let chain = """
    operation { name = "gen", sh = "echo ran gen >> log; cp a.txt gen.h", inputs = "a.txt", outputs = "gen.h" }
    operation { name = "cc", sh = "echo ran cc >> log; cat gen.h b.txt > out.o",
      inputs = { "b.txt", "gen.h" }, outputs = "out.o", after = "gen" }
    operation { name = "plain", sh = "echo ran plain >> log" }
    """

  @Test func aSecondRunDoesOnlyWhatChangedAndSaysWhy() throws {
    let dir = try workflow(Self.chain, ["a.txt": "A\n", "b.txt": "B\n"])
    let first = try run(dir)
    #expect(first.run.status == 0, "\(first.run.stderr)")
    #expect(first.ops["gen"]?.outcome == "succeeded" && first.ops["gen"]?.why == "never ran")
    #expect(first.run.stdout.contains("ok        gen (") && first.run.stdout.contains(" — never ran"))
    try write("", dir, "log")
    let second = try run(dir)
    #expect(second.ops["gen"]?.outcome == "up_to_date" && second.ops["cc"]?.outcome == "up_to_date")
    #expect(second.ops["gen"]?.why == "up to date since run 1")
    #expect(second.ops["plain"]?.outcome == "succeeded")  // nothing declared: it always runs
    #expect(read(dir, "log") == "ran plain\n")
    #expect(second.run.stdout.contains("fresh     gen — up to date since run 1"))
    #expect(second.run.stdout.contains("1 succeeded, 2 up to date in"))
    // A file rewritten with the same contents is no change.
    try write("A\n", dir, "a.txt")
    #expect(try run(dir).ops["gen"]?.outcome == "up_to_date")
    // A changed input: it and what uses its output run, each saying why.
    try write("A2\n", dir, "a.txt")
    let third = try run(dir)
    #expect(third.ops["gen"]?.why == "input a.txt changed")
    #expect(third.ops["cc"]?.why == "upstream 'gen' produced a new gen.h")
    #expect(read(dir, "out.o") == "A2\nB\n")
  }

  /// Files written well before they were hashed are trusted: a later run compares their
  /// stats alone (the quick check), and still sees every change that moves a stat.
  @Test func trustedFilesAreCheckedByTheirStatsAndChangesStillShow() throws {
    let dir = try workflow(Self.chain, ["a.txt": "A\n", "b.txt": "B\n"])
    #expect(try run(dir).run.status == 0)
    func age(_ names: [String], _ seconds: Double) throws {
      for name in names {
        try FileManager.default.setAttributes(
          [.modificationDate: Date(timeIntervalSince1970: 1_600_000_000 + seconds)],
          ofItemAtPath: dir.appendingPathComponent(name).path)
      }
    }
    try age(["a.txt", "b.txt", "gen.h", "out.o"], 0)
    for _ in 0..<2 {  // the first looks again and trusts them; the second compares stats only
      let again = try run(dir)
      #expect(again.ops["gen"]?.outcome == "up_to_date" && again.ops["cc"]?.outcome == "up_to_date")
    }
    try write("C\n", dir, "b.txt")  // the same size
    try age(["b.txt"], 100)
    #expect(try run(dir).ops["cc"]?.why == "input b.txt changed")
    try age(["out.o", "b.txt"], 200)
    #expect(try run(dir).ops["cc"]?.outcome == "up_to_date")
    try FileManager.default.removeItem(at: dir.appendingPathComponent("out.o"))
    #expect(try run(dir).ops["cc"]?.why == "output out.o missing")
    #expect(read(dir, "out.o") == "A\nC\n")
  }

  @Test func anOutputThatCameOutTheSameStopsTheRebuild() throws {
    let dir = try workflow(
      """
      operation { name = "gen", sh = "echo ran gen >> log; cut -c1 a.txt > gen.h", inputs = "a.txt", outputs = "gen.h" }
      operation { name = "use", sh = "echo ran use >> log; cp gen.h use.txt", outputs = "use.txt", after = "gen" }
      """, ["a.txt": "xy\n"])
    #expect(try run(dir).run.status == 0)
    try write("xz\n", dir, "a.txt")  // gen reruns, but its first column is the same
    try write("", dir, "log")
    let second = try run(dir)
    #expect(second.ops["gen"]?.outcome == "succeeded")
    #expect(second.ops["use"]?.outcome == "up_to_date")
    #expect(read(dir, "log") == "ran gen\n")
  }

  @Test func aChangedCommandKeyOrEnvSaysWhatChanged() throws {
    let script = { (flag: String) in
      """
      operation { name = "cc", sh = "echo \(flag) > out.o", outputs = "out.o", key = { cflags = "\(flag)" } }
      operation { name = "env", sh = "echo $X > env.txt", outputs = "env.txt", env = { X = "\(flag)" } }
      """
    }
    let dir = try workflow(script("-O2"))
    #expect(try run(dir).run.status == 0)
    try write(script("-O3"), dir, "build.lua")
    let second = try run(dir)
    #expect(second.ops["cc"]?.why == "command changed (-O2 → -O3)")
    #expect(second.ops["env"]?.why == "env changed (X=-O2 → X=-O3)")
    // The key alone.
    try write(script("-O3").replacing("cflags = \"-O3\"", with: "cflags = \"-g\""), dir, "build.lua")
    #expect(try run(dir).ops["cc"]?.why?.hasPrefix("key changed") == true)
  }

  @Test func missingAndHandEditedOutputsRunAgain() throws {
    let dir = try workflow(Self.chain, ["a.txt": "A\n", "b.txt": "B\n"])
    #expect(try run(dir).run.status == 0)
    try FileManager.default.removeItem(at: dir.appendingPathComponent("out.o"))
    #expect(try run(dir).ops["cc"]?.why == "output out.o missing")
    try write("edited\n", dir, "out.o")
    #expect(try run(dir).ops["cc"]?.why == "output out.o changed since run 2")
    #expect(read(dir, "out.o") == "A\nB\n")
  }

  @Test func aGlobThatGainsOrLosesAFileRunsAgain() throws {
    let dir = try workflow(
      #"operation { name = "cat", sh = "cat src/*.txt > all.txt", inputs = "src/*.txt", outputs = "all.txt" }"#,
      ["src/a.txt": "a\n"])
    #expect(try run(dir).run.status == 0)
    try write("b\n", dir, "src/b.txt")
    #expect(try run(dir).ops["cat"]?.why == "input src/b.txt added")
    try FileManager.default.removeItem(at: dir.appendingPathComponent("src/a.txt"))
    #expect(try run(dir).ops["cat"]?.why == "input src/a.txt removed")
    #expect(read(dir, "all.txt") == "b\n")
  }

  @Test func aDepfileNamesTheHeadersOfTheNextRun() throws {
    // A compiler stand-in: the object is the source with its #include'd file, and the
    // depfile names the header as gcc -MD would.
    let dir = try workflow(
      """
      operation { name = "cc", inputs = "a.c", outputs = "a.o", depfile = "a.d",
        sh = "cat a.c $(sed -n 's/#include //p' a.c) > a.o; printf 'a.o: a.c \\\\\\n  %s\\n' $(sed -n 's/#include //p' a.c) > a.d" }
      """, ["a.c": "#include inc/h.h\n", "inc/h.h": "one\n"])
    let first = try run(dir)
    #expect(first.run.status == 0, "\(first.run.stderr)")
    #expect(read(dir, "a.d")?.contains("inc/h.h") == true)
    #expect(try run(dir).ops["cc"]?.outcome == "up_to_date")
    try write("two\n", dir, "inc/h.h")
    let third = try run(dir)
    #expect(third.ops["cc"]?.why == "input inc/h.h changed (from its depfile)")
    #expect(read(dir, "a.o") == "#include inc/h.h\ntwo\n")
  }

  /// The README's worked example: examples/c-project, built, changed and built again.
  @Test func theCProjectExampleRebuildsWhatAChangeReaches() throws {
    let dir = try Scratch.folder("c-project", [:])
    let example = Binary.packageRoot.appendingPathComponent("examples/c-project")
    for name in ["build.lua", "src/main.c", "src/greet.c", "src/count.c", "include/greet.h", "include/count.h"] {
      try write(try String(contentsOf: example.appendingPathComponent(name), encoding: .utf8), dir, name)
    }
    let first = try run(dir)
    #expect(first.run.status == 0, "\(first.run.stdout)\(first.run.stderr)")
    let again = try run(dir)
    #expect(["main.o", "greet.o", "count.o", "app"].allSatisfy { again.ops[$0]?.outcome == "up_to_date" })
    // A comment in a header: the objects that include it compile again and come out the same.
    try write(read(dir, "include/greet.h")! + "/* v2 */\n", dir, "include/greet.h")
    let comment = try run(dir)
    #expect(comment.ops["greet.o"]?.why == "input include/greet.h changed (from its depfile)")
    #expect(comment.ops["main.o"]?.outcome == "succeeded" && comment.ops["count.o"]?.outcome == "up_to_date")
    #expect(comment.ops["app"]?.outcome == "up_to_date")
    // A change to the code: the object differs and the program is linked again.
    try write(read(dir, "src/greet.c")!.replacing("(%d)\\n", with: "(%d)!\\n"), dir, "src/greet.c")
    let code = try run(dir)
    #expect(code.ops["greet.o"]?.why == "input src/greet.c changed")
    #expect(code.ops["app"]?.why == "upstream 'greet.o' produced a new build/greet.o")
    #expect(code.ops["test"]?.outcome == "succeeded")
    // Other flags: the key changes, so every object is built again.
    let flags = try run(dir, script: ["-O2"])
    #expect(flags.ops["count.o"]?.why?.hasPrefix("command changed (-O0 → -O2)") == true, "\(flags.run.stdout)")
  }

  /// An input changed while its operation ran: the run used the old or the new contents,
  /// nobody knows which, so the next run runs it again.
  @Test func anInputChangedWhileItsOperationRanRunsItAgain() throws {
    let dir = try workflow(
      #"operation { name = "slow", sh = "touch started; sleep 0.5; cat in.txt > out.txt", inputs = "in.txt", outputs = "out.txt" }"#,
      ["in.txt": "one\n"])
    let events = dir.appendingPathComponent("e.jsonl")
    let started = try Binary.start(["--progress", "plain", "--events", events.path, "build.lua"], in: dir)
    let deadline = Date().addingTimeInterval(20)
    while !FileManager.default.fileExists(atPath: dir.appendingPathComponent("started").path), Date() < deadline {
      usleep(10_000)
    }
    try write("two\n", dir, "in.txt")
    #expect(Binary.finish(started, timeout: 20).status == 0)
    #expect(try run(dir).ops["slow"]?.why == "input in.txt changed")
    #expect(try run(dir).ops["slow"]?.outcome == "up_to_date")
  }

  @Test func foldersLinksAndFreshChecksAreInputsAndOutputsToo() throws {
    let dir = try workflow(
      """
      operation { name = "site", sh = "mkdir -p site/css; cat pages/*.md > site/index.html; cp style.css site/css/",
        inputs = { "pages", "style.css" }, outputs = "site" }
      operation { name = "marker", run = function() io.open("done", "w"):close() end,
        fresh = function(op) return io.open("done") ~= nil end }
      """, ["pages/a.md": "a\n", "real.css": "body{}\n"])
    try FileManager.default.createSymbolicLink(
      atPath: dir.appendingPathComponent("style.css").path, withDestinationPath: "real.css")
    let first = try run(dir)
    #expect(first.run.status == 0, "\(first.run.stderr)")
    #expect(first.ops["marker"]?.why == "fresh() returned false")
    let second = try run(dir)
    #expect(second.ops["site"]?.outcome == "up_to_date" && second.ops["marker"]?.outcome == "up_to_date")
    try write("body{color:red}\n", dir, "real.css")  // through the link
    #expect(try run(dir).ops["site"]?.why == "input style.css changed")
    try write("b\n", dir, "pages/b.md")  // a new file in an input folder
    #expect(try run(dir).ops["site"]?.why == "input pages/b.md added")
    try FileManager.default.removeItem(at: dir.appendingPathComponent("site/css/style.css"))  // inside an output folder
    #expect(try run(dir).ops["site"]?.why == "output site/css/style.css missing")
  }

  /// What a fresh-eyes pass found: each a way the store could hang, harm or lie.
  @Test func hostileDeclarationsNeitherHangNorHarm() throws {
    let dir = try workflow(
      """
      operation { name = "proc", outputs = "o", depfile = "o.d",
        sh = "echo 'o: /proc/self/pagemap' > o.d; touch o" }
      operation { name = "bad", after = "proc", outputs = { ".", "build.lua", "out/*.o" },
        sh = "sleep 0.3; echo x >> build.lua.copy; echo b > out/bad.o; exit 3" }
      operation { name = "good", outputs = "out/good.o", sh = "mkdir -p out; echo g > out/good.o" }
      operation { name = "pipe", inputs = "fifo", sh = "true" }
      """)
    #expect(mkfifo(dir.appendingPathComponent("fifo").path, 0o600) == 0)
    let first = try run(dir, ["-k"])
    #expect(first.run.status == 1)
    #expect(first.ops["proc"]?.outcome == "succeeded")  // /proc's endless file read as its stat's size
    #expect(read(dir, "out/good.o") == "g\n", "another operation's file matched by a failed glob stays")
    #expect(read(dir, "build.lua") != nil, "the script is never removed")
    #expect(first.ops["pipe"]?.why == "input fifo cannot be read")
    let history = try Binary.run(["history", "build.lua"], in: dir)
    #expect(history.status == 0 && history.stdout.contains("failed"), "the store survived: \(history.stdout)")
    #expect(try run(dir).ops["proc"]?.outcome == "up_to_date")
  }

  @Test func osExitInFreshEndsTheRunAndNothingStarts() throws {
    let dir = try workflow(#"operation { name = "ex", sh = "touch RAN", fresh = function() os.exit(7) end }"#)
    let run = try Binary.run(["--progress", "plain", "build.lua"], in: dir)
    #expect(run.status == 7)
    #expect(read(dir, "RAN") == nil, "\(run.stdout)")
  }

  @Test func afterAlwaysTheNextRunIsUpToDate() throws {
    let dir = try workflow(Self.chain, ["a.txt": "A\n", "b.txt": "B\n"])
    #expect(try run(dir, ["-B"]).run.status == 0)
    #expect(try run(dir, ["-B"]).ops["gen"]?.why == "-B: every operation runs")
    let after = try run(dir)
    #expect(after.ops["gen"]?.outcome == "up_to_date" && after.ops["cc"]?.outcome == "up_to_date")
  }

  @Test func aDoctoredStoreIsShownNotTrusted() throws {
    let dir = try workflow(#"operation { name = "a", sh = "true" }"#)
    #expect(try run(dir).run.status == 0)
    let db = dir.appendingPathComponent(".taskrun/build.lua.db").path
    _ = try Child.output([
      "sqlite3", db, "update runs set started = 1e20, ended = -5; update attempts set duration = -1e308, cpu = 1e300"
    ])
    let runs = try Binary.run(["history", "build.lua"], in: dir)
    let op = try Binary.run(["history", "build.lua", "a"], in: dir)
    #expect(runs.status == 0 && op.status == 0, "\(runs.stderr)\(op.stderr)")
    let hostile = try Binary.run(["history", "build.lua", "\u{1B}]0;x\u{7}"], in: dir)
    #expect(!hostile.stdout.contains("\u{1B}"))
    let bad = try Binary.run(["--resume=0", "build.lua"], in: dir)
    #expect(
      bad.status == 2 && bad.stderr.contains("--resume=RUN needs a run id, a whole number from 1"), "\(bad.stderr)")
  }

  @Test func badDeclarationsAreErrorsAtTheirLine() throws {
    for (spec, message) in [
      (
        "key = { f = print }",
        "field 'key' must be made of nil, booleans, numbers, strings and tables, to be compared between runs: key.f is a function"
      ),
      ("inputs = { 1 }", "field 'inputs' must hold paths (got number)"),
      ("outputs = ''", "field 'outputs': a path must not be empty"),
      ("depfile = {}", "field 'depfile' must be a path (got table)"),
      ("fresh = true", "field 'fresh' must be a function (got boolean)")
    ] {
      let dir = try workflow("\n" + #"operation { name = "x", sh = "true", "# + spec + " }")
      let run = try Binary.run(["build.lua"], in: dir)
      #expect(
        run.status == 2 && run.stderr.contains("build.lua:2: operation 'x': " + message), "\(spec): \(run.stderr)")
    }
  }

  @Test func aFailureRemovesTheOutputsItChangedAndAMissingOutputFails() throws {
    let dir = try workflow(
      """
      operation { name = "half", sh = "echo partial > half.txt; exit 3", outputs = "half.txt" }
      operation { name = "kept", sh = "exit 4", outputs = "kept.txt" }
      operation { name = "none", sh = "true", outputs = { "none.txt", "dir/*.o" } }
      """, ["kept.txt": "from before\n"])
    let result = try run(dir, ["-k"])
    #expect(result.run.status == 1)
    #expect(read(dir, "half.txt") == nil)  // written by the failed attempt: removed
    #expect(read(dir, "kept.txt") == "from before\n")  // not touched by it: kept
    #expect(result.run.stderr.contains("declared output 'none.txt' was not made; no file matches output 'dir/*.o'"))
    #expect(result.ops["none"]?.outcome == "failed")
  }

  @Test func alwaysRunsEverythingAndNoStoreKeepsNothing() throws {
    let dir = try workflow(Self.chain, ["a.txt": "A\n", "b.txt": "B\n"])
    #expect(try run(dir).run.status == 0)
    let always = try run(dir, ["-B"])
    #expect(always.ops["gen"]?.outcome == "succeeded" && always.ops["gen"]?.why == "-B: every operation runs")
    let other = try workflow(Self.chain, ["a.txt": "A\n", "b.txt": "B\n"])
    #expect(try run(other, ["--no-store"]).run.status == 0)
    #expect(try run(other, ["--no-store"]).ops["gen"]?.outcome == "succeeded")
    #expect(!FileManager.default.fileExists(atPath: other.appendingPathComponent(".taskrun").path))
  }

  @Test func aDryRunSaysWhatWouldRunAndRunsNothing() throws {
    let dir = try workflow(Self.chain, ["a.txt": "A\n", "b.txt": "B\n"])
    let never = try Binary.run(["-n", "build.lua"], in: dir)
    #expect(never.stdout.contains("1. gen — sh: echo ran gen >> log; cp a.txt gen.h — would run: never ran"))
    #expect(!FileManager.default.fileExists(atPath: dir.appendingPathComponent(".taskrun").path))
    #expect(try run(dir).run.status == 0)
    try write("A2\n", dir, "a.txt")
    try FileManager.default.removeItem(at: dir.appendingPathComponent("log"))
    let dry = try Binary.run(["-n", "build.lua"], in: dir)
    #expect(dry.stdout.contains("— would run: input a.txt changed"))
    #expect(dry.stdout.contains("— would run: upstream 'gen' would run"))
    #expect(dry.stdout.contains("Would run 3, up to date 0"))
    #expect(read(dir, "log") == nil)
    #expect(read(dir, "gen.h") == "A\n")
    let why = try Binary.run(["why", "build.lua", "gen"], in: dir)
    #expect(why.status == 0)
    #expect(why.stdout.hasPrefix("gen: would run: input a.txt changed\n  last: run 1, succeeded: never ran"))
  }

  @Test func aSecondRunOfTheWorkflowWaitsAndAKilledRunsLockIsNone() throws {
    let dir = try workflow(#"operation { name = "slow", sh = "touch started; sleep 30" }"#)
    try write(#"operation { name = "other", sh = "true" }"#, dir, "other.lua")
    let first = try Binary.start(["--progress", "plain", "build.lua"], in: dir)
    let deadline = Date().addingTimeInterval(20)
    while !FileManager.default.fileExists(atPath: dir.appendingPathComponent("started").path), Date() < deadline {
      usleep(20_000)
    }
    // Another script of the folder has a store of its own: it does not wait.
    #expect(try Binary.run(["other.lua"], in: dir).status == 0)
    let second = try Binary.start(["--progress", "plain", "build.lua"], in: dir)
    let interrupted = try Binary.start(["--progress", "plain", "build.lua"], in: dir)
    usleep(600_000)
    #expect(second.child.wait(timeout: 0) == nil)  // still waiting
    kill(interrupted.child.pid, SIGINT)
    let stopped = Binary.finish(interrupted, timeout: 10)
    #expect(stopped.status == 130)
    #expect(stopped.stdout.contains("waiting for another taskrun (pid \(first.child.pid)) running this workflow here"))
    // The waiting run loads the script once it has the lock: it is rewritten before the kill,
    // or a loaded machine lets the waiter load the old one (30 s) between the kill and the write.
    try write(#"operation { name = "slow", sh = "true" }"#, dir, "build.lua")
    kill(first.child.pid, SIGKILL)
    _ = Binary.finish(first, timeout: 10)
    let after = Binary.finish(second, timeout: 20)
    #expect(after.status == 0, "\(after.stderr)")
    let history = try Binary.run(["history", "build.lua"], in: dir)
    #expect(history.stdout.contains("killed"))
  }

  @Test func aBrokenOrUnusableStoreIsAWarningAndTheRunGoesOn() throws {
    let dir = try workflow(Self.chain, ["a.txt": "A\n", "b.txt": "B\n", ".taskrun/build.lua.db": "garbage, not SQLite"])
    let broken = try run(dir)
    #expect(broken.run.status == 0)
    #expect(broken.run.stderr.contains("taskrun: warning: "))
    #expect(broken.run.stderr.contains("build.lua.db cannot be used"))
    let file = try workflow(Self.chain, ["a.txt": "A\n", "b.txt": "B\n", ".taskrun": "a file, not a folder"])
    let unusable = try run(file)
    #expect(unusable.run.status == 0)
    #expect(unusable.run.stderr.contains("is not a folder"))
  }

  @Test func resumeReusesWhatSucceededAndRestoresResults() throws {
    let script = """
      local a = operation { name = "a", run = function() io.open("a.count", "a"):write("x") return { n = 41 } end }
      local s = operation { name = "s", sh = "echo ran >> s.count; echo out" }
      operation { name = "b", after = { a, s }, run = function()
        local f = io.open("fail")
        if f then f:close() error("b fails") end
        io.open("b.txt", "w"):write(a.result.n + 1, " ", s.result.stdout)
      end }
      """
    let dir = try workflow(script, ["fail": ""])
    let failed = try run(dir)
    #expect(failed.run.status == 1)
    try FileManager.default.removeItem(at: dir.appendingPathComponent("fail"))
    let resumed = try run(dir, ["--resume"])
    #expect(resumed.run.status == 0, "\(resumed.run.stderr)")
    #expect(resumed.ops["a"]?.outcome == "resumed" && resumed.ops["s"]?.outcome == "resumed")
    #expect(resumed.ops["b"]?.outcome == "succeeded")
    #expect(read(dir, "a.count") == "x")  // not run again
    #expect(read(dir, "s.count") == "ran\n")
    #expect(read(dir, "b.txt") == "42 out\n")  // the results of a and s, restored
    #expect(resumed.run.stdout.contains("resuming run 1"))
    let bad = try Binary.run(["--resume=99", "build.lua"], in: dir)
    #expect(bad.status == 2 && bad.stderr.contains("run 99 is not in the store"))
  }

  @Test func resumedResultsComeBackAsTheyWere() throws {
    let script = """
      local a = operation { name = "a", run = function()
        return { 7.0, -0.0, 1/0, -1/0, math.mininteger, 2^63, "\\0x", [true] = "t", nested = { 1e15 } } end }
      operation { name = "b", after = a, run = function()
        if io.open("fail") then error("b fails") end
        local r = a.result
        local f = io.open("seen.txt", "w")
        f:write(math.type(r[1]), " ", tostring(1/r[2]), " ", tostring(r[3]), " ", tostring(r[4]), " ",
          math.type(r[5]), " ", tostring(r[5] == math.mininteger), " ", tostring(r[6] == 2^63), " ",
          tostring(r[true]), " ", math.type(r.nested[1]))
        f:close()
      end }
      """
    let dir = try workflow(script, ["fail": ""])
    #expect(try run(dir).run.status == 1)
    try FileManager.default.removeItem(at: dir.appendingPathComponent("fail"))
    let resumed = try run(dir, ["--resume"])
    #expect(resumed.ops["a"]?.outcome == "resumed", "\(resumed.run.stdout)\(resumed.run.stderr)")
    #expect(read(dir, "seen.txt") == "float -inf inf -inf integer true true t float")
  }

  /// What finished is committed within 50 ms even while another operation runs on.
  @Test func whatFinishedIsInTheStoreWhileTheRunGoesOn() throws {
    let dir = try workflow(
      #"operation { name = "quick", sh = "true" } operation { name = "long", sh = "touch started; sleep 3" }"#)
    let started = try Binary.start(["--progress", "plain", "build.lua"], in: dir)
    let deadline = Date().addingTimeInterval(20)
    while !FileManager.default.fileExists(atPath: dir.appendingPathComponent("started").path), Date() < deadline {
      usleep(20_000)
    }
    usleep(500_000)
    kill(started.child.pid, SIGKILL)
    _ = Binary.finish(started, timeout: 10)
    let resumed = try run(dir, ["--resume", "--no-color"], script: [])
    #expect(resumed.ops["quick"]?.outcome == "resumed", "\(resumed.run.stdout)")
  }

  @Test func historyMakesTheETAKnownFromTheStartAndRunsTheLongChainFirst() throws {
    // The long chain is declared last: without history, -j1 starts "short" first.
    let dir = try workflow(
      """
      operation { name = "short", sh = "sleep 0.05; echo short >> order" }
      operation { name = "long1", sh = "sleep 0.3; echo long1 >> order" }
      operation { name = "long2", sh = "sleep 0.3; echo long2 >> order", after = "long1" }
      """)
    #expect(try run(dir, ["-j1"]).run.status == 0)
    #expect(read(dir, "order") == "short\nlong1\nlong2\n")
    try FileManager.default.removeItem(at: dir.appendingPathComponent("order"))
    let events = dir.appendingPathComponent("e.jsonl")
    let second = try Binary.run(["-j1", "--progress", "plain", "--events", events.path, "build.lua"], in: dir)
    #expect(second.status == 0)
    #expect(read(dir, "order") == "long1\nlong2\nshort\n")
    // The first progress event with a running operation already has an ETA.
    let lines = try String(contentsOf: events, encoding: .utf8).split(separator: "\n")
    let firstProgress = lines.first { $0.contains("\"event\":\"progress\"") && $0.contains("\"running\":1") }
    #expect(firstProgress.map { !$0.contains("\"eta\":null") } == true, "\(firstProgress ?? "none")")
    let predict = try Binary.run(["-n", "--predict", "-j1", "build.lua"], in: dir)
    #expect(predict.stdout.contains("Predicted: "))
    #expect(predict.stdout.contains("Critical path: long1"))
  }
}

/// The live view marks a row that runs past the 90th percentile of its recorded durations.
@Suite struct SlowRowTests {
  @Test func aRowPastItsUsualTimeSaysSo() {
    let late = LiveRegion(color: ColorPolicy(enabled: false), frame: 0, now: 10)
    let row = LiveReporter.Row(name: "build", start: 0, usual: 4)
    #expect(late.row(row, width: 100).contains("slower than usual (p90 4.0s)"))
    let onTime = LiveRegion(color: ColorPolicy(enabled: false), frame: 0, now: 3)
    #expect(!onTime.row(row, width: 100).contains("slower"))
    #expect(!late.row(LiveReporter.Row(name: "new", start: 0), width: 100).contains("slower"))
  }
}
