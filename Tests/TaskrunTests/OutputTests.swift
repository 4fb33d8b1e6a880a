// Command output: byte for byte into Lua, bounded in memory, and the whole of it kept in a file.
import Foundation
import TestSupport
import Testing

@Suite(.serialized) struct OutputTests {
  /// Runs `script` with TMPDIR in its own folder: a spill file a result names stays after
  /// the run, and goes with the test's scratch folder.
  func run(_ script: String, _ arguments: [String] = []) throws -> (Run, MarkedWorkflow) {
    let w = try MarkedWorkflow { _ in script }
    let started = try Binary.start(
      ["--progress", "plain", "--events", "events.jsonl"] + arguments + ["w.lua"], in: w.dir,
      environment: ["TMPDIR": w.dir.path])
    return (Binary.finish(started, timeout: 60), w)
  }

  @Test func crlfEndsLinesAndCarriageReturnsFeedProgressPatterns() throws {
    let (run, w) = try run(
      """
      operation { name = "crlf", sh = "printf 'one\\r\\ntwo\\r\\n'" }
      operation { name = "meter", progress = "(%d+)%%", sh = "printf '  10%%\\r  50%%\\r'; sleep 0.5; printf ' 90%%\\r100%%\\n'" }
      """, ["--events", "events.ndjson"])
    #expect(run.status == 0, "\(run.stdout)\(run.stderr)")
    let events = try String(contentsOf: w.dir.appendingPathComponent("events.ndjson"), encoding: .utf8)
      .split(separator: "\n").compactMap { try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
    let outputs = events.filter { $0["event"] as? String == "output" }.map { "\($0["operation"]!): \($0["text"]!)" }
    #expect(
      outputs == ["crlf: one\ntwo\n", "meter: 100%\n"],
      "CRLF is a line break; an overwritten line shows its last stretch")
    let meter = events.filter { $0["event"] as? String == "progress" && $0["operation"] as? String == "meter" }
    #expect(
      meter.contains { ($0["completed"] as? Int) == 50 && ($0["time"] as? Double ?? 1) < 0.45 },
      "the meter's progress arrived before its line ended: \(meter)")
  }

  @Test func outputReachesLuaByteForByte() throws {
    let (run, _) = try run(
      """
      local r = sh([[printf '\\377\\000x\\n\\200']])
      assert(#r.stdout == 5, #r.stdout)
      assert(r.stdout:byte(1) == 255 and r.stdout:byte(2) == 0 and r.stdout:byte(5) == 128)
      local z = sh("printf hello | gzip -c | gzip -dc")
      assert(z.stdout == "hello", z.stdout)
      local gz = sh("printf hello | gzip -c").stdout
      assert(gz:byte(1) == 0x1f and gz:byte(2) == 0x8b, "gzip's magic bytes were changed")
      """)
    #expect(run.status == 0, "\(run.stdout)\(run.stderr)")
  }

  @Test func pastTheLimitTheWholeOutputIsInAFileAndLuaGetsTheTail() throws {
    let (run, _) = try run(
      """
      local r = sh("head -c 3000000 /dev/zero | tr '\\\\0' a; printf END")
      assert(#r.stdout == 65536, #r.stdout)
      assert(r.stdout:sub(-3) == "END")
      local f = assert(io.open(r.stdout_file, "rb"))
      local all = f:read("a")
      f:close()
      assert(#all == 3000003 and all:sub(-3) == "END", #all)
      print("file " .. r.stdout_file)
      operation { name = "loud", sh = "head -c 3000000 /dev/zero | tr '\\\\0' b; exit 1" }
      """, ["--output-limit", "1"])
    #expect(run.status == 1, "\(run.stdout)\(run.stderr)")
    #expect(run.stderr.contains("(all of its output: /"), "\(run.stderr.prefix(2000))")
    let longest = (run.stdout + run.stderr).split(separator: "\n").map(\.count).max() ?? 0
    #expect(longest < 2000, "the report printed a line of \(longest) characters")
  }

  @Test func aFailuresOutputSaysHowManyEarlierLinesItDoesNotShow() throws {
    // 2,000,000 lines: most are gone from what taskrun keeps; 250: all kept, 50 not shown.
    let (run, _) = try run(
      """
      operation { name = "many", sh = "seq 1 2000000; exit 1" }
      operation { name = "some", sh = "seq 1 250; exit 1" }
      """, ["-k"])
    #expect(run.status == 1, "\(run.stdout)\(run.stderr)")
    let lines = run.stderr.split(separator: "\n")
    let many = lines.firstIndex { $0.hasPrefix("FAILED    many") }
    let some = lines.firstIndex { $0.hasPrefix("FAILED    some") }
    #expect(many != nil && some != nil, "\(run.stderr.prefix(3000))")
    guard let many, let some else { return }
    #expect(lines[many + 1] == "    | … 1999800 earlier lines (--events or -v shows them all)", "\(lines[many + 1])")
    #expect(lines[many + 2] == "    | 1999801" && lines[many + 201] == "    | 2000000")
    #expect(lines[some + 1] == "    | … 50 earlier lines (--events or -v shows them all)", "\(lines[some + 1])")
    #expect(lines[some + 2] == "    | 51" && lines[some + 201] == "    | 250")
    #expect(!run.stdout.contains("earlier lines"), "the note belongs with the output it explains, on stderr")
  }

  @Test func aFailuresLinesAreShownAlikeWhetherOrNotTheOutputWasReadAsItCame() throws {
    // Without -v the output is kept as bytes and decoded for the report; with -v as text.
    for arguments in [["-k"], ["-k", "-v"], ["-k", "--events", "events.ndjson"]] {
      let (run, _) = try run(
        #"operation { name = "meter", sh = "printf 'one\\r\\ntwo\\rTWO\\nbad\\377\\n 10%%\\r 90%%\\rend'; exit 1" }"#,
        arguments)
      #expect(run.status == 1, "\(run.stdout)\(run.stderr)")
      let lines = run.stderr.split(separator: "\n", omittingEmptySubsequences: false)
      guard let failed = lines.firstIndex(where: { $0.hasPrefix("FAILED    meter") }) else {
        Issue.record("\(arguments): \(run.stderr)"); continue
      }
      if arguments.contains("-v") { continue }  // -v printed the lines as they came, not after FAILED
      #expect(
        Array(lines[(failed + 1)...(failed + 4)]) == ["    | one", "    | TWO", "    | bad\u{FFFD}", "    | end"],
        "\(arguments): \(run.stderr)")
    }
  }

  @Test func anExecutableScriptWithoutAShebangRunsInSh() throws {
    // As execvp, sh and make do on ENOEXEC: /bin/sh runs it, with the command's arguments.
    let w = try MarkedWorkflow { _ in
      """
      operation { name = "table", sh = { "./noshebang.sh", "one two", "three" } }
      operation { name = "plain", sh = "./noshebang.sh four" }
      operation { name = "inlua", run = function()
        local r = sh { "./noshebang.sh", "five" }
        assert(r.stdout == "args 1: five\\n", r.stdout)
      end }
      """
    }
    try Scratch.writeProgram("echo \"args $#: $1\"\n", to: w.dir.appendingPathComponent("noshebang.sh"))
    let run = Binary.finish(try w.start(["-k", "-v"]), timeout: 60)
    #expect(run.status == 0, "\(run.stdout)\(run.stderr)")
    #expect(run.stdout.contains("[table] args 2: one two"), "\(run.stdout)\(run.stderr)")
    #expect(run.stdout.contains("[plain] args 1: four"))
    #expect(run.stdout.contains("ok        inlua"))
  }

  @Test func aCommandThatPrintsWithoutEndDoesNotFillMemory() throws {
    let w = try MarkedWorkflow { env in #"operation { name = "yes", \#(env), sh = "yes | head -c 300000000" }"# }
    let started = try w.start()
    var peakKB = 0
    var status: Int32 = 0
    var usage = rusage()
    let deadline = Date().addingTimeInterval(120)
    while wait4(started.child.pid, &status, WNOHANG, &usage) == 0 && Date() < deadline { usleep(50_000) }
    peakKB = usage.ru_maxrss
    _ = Binary.finish(started, timeout: 1)
    #expect(status == 0, "status \(status)")
    #expect(peakKB > 0 && peakKB < 400_000, "peak memory \(peakKB) KB for 300 MB of output")
  }
}

@Suite struct MemoryLimitTests {
  @Test func aBodyOverTheLimitFailsAndTheRunGoesOn() throws {
    let w = try MarkedWorkflow { _ in
      """
      operation { name = "hog", run = function() local t = {} for i = 1, 1e9 do t[i] = ("x"):rep(100) .. i end end }
      operation { name = "big", run = function() local s = ("x"):rep(2^30) end }
      operation { name = "inner", run = function()
        coroutine.wrap(function() local t = {} for i = 1, 1e9 do t[i] = { i } end end)()
      end }
      operation { name = "after", after = { "hog" }, when = "finished", run = function() print(#("y"):rep(1000)) end }
      """
    }
    let run = Binary.finish(try w.start(["--memory", "40", "-k"]), timeout: 60)
    #expect(run.status == 1, "\(run.stdout)\(run.stderr)")
    for name in ["hog", "big", "inner"] {
      #expect(run.stderr.contains("FAILED    \(name)"), "\(name): \(run.stderr)")
    }
    #expect(run.stderr.contains("out of memory: the Lua heap reached its limit of 40 MB (--memory)"))
    #expect(run.stdout.contains("ok        after"), "the run did not go on")
    #expect(!run.stderr.contains("PANIC"))
  }

  @Test func theLoadOverTheLimitIsAScriptError() throws {
    let w = try MarkedWorkflow { _ in "local t = {} for i = 1, 1e9 do t[i] = { i } end" }
    let run = Binary.finish(try w.start(["--memory", "20"]), timeout: 60)
    #expect(
      run.status == 2 && run.stderr.contains("out of memory: the Lua heap reached its limit of 20 MB"), "\(run.stderr)")
  }
}
