// The events schema (docs/events.schema.json) holds for real runs: a workflow that makes
// every kind of event, an interrupted run, an example and `taskrun test`.
import Foundation
import TestSupport
import Testing

@Suite struct EventSchemaTests {
  /// A Python with the jsonschema module (scripts/setup installs Debian's python3-jsonschema).
  static let python: String? = ["/usr/bin/python3", "python3"].first { python in
    guard
      let child = try? Child(
        [python, "-c", "import jsonschema"], environment: ProcessInfo.processInfo.environment,
        stdin: "/dev/null", stdout: "/dev/null", stderr: "/dev/null")
    else { return false }
    return child.wait(timeout: 30) == 0
  }

  static let everything = """
    local a = operation { name = "a", sh = "echo out; echo err >&2" }
    local tries = 0
    local flaky = operation { name = "flaky", retries = 1, run = function()
      tries = tries + 1
      if tries == 1 then error("first try fails") end
    end }
    local g = group { name = "g", after = { a },
      operation { name = "g1", run = function(op)
        local p = progress { total = 3, description = "steps" }
        for i = 1, 3 do p.completed = i; sleep(0.02) end
      end },
      operation { name = "g2", observers = { activity "net" }, sh = "sleep 0.05" } }
    operation { name = "p", after = { g, flaky }, run = function() print("hello") end }
    operation { name = "bad", after = { g }, sh = "exit 3" }
    operation { name = "last", after = { "bad" }, when = "finished", sh = "true" }
    local q = queue { name = "lane", max_concurrent = 1 }
    local held = operation { name = "held", queue = q, run = function(op)
      op.progress:set_user_info("photo", "a.jpg")
      op.progress.total = 2
      op.progress.completed = 1
      sleep(0.2)
    end }
    local doomed = operation { name = "doomed", queue = q, run = function() sleep(5) end }
    operation { name = "driver", run = function()
      q.suspended = true
      q.max_concurrent = 2
      q.suspended = false
      sleep(0.05)
      held.progress:pause()
      sleep(0.05)
      held.progress:resume()
      doomed:cancel("not needed")
    end }
    """

  @Test(.enabled(if: python != nil, "no Python with jsonschema (apt-get install python3-jsonschema)"))
  func realRunsMatchThePublishedSchema() throws {
    let dir = Scratch.root.appendingPathComponent("taskrun-schema-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
    try Self.everything.write(to: dir.appendingPathComponent("w.lua"), atomically: true, encoding: .utf8)
    try #"operation { name = "s", sh = "sleep 5" }"#.write(
      to: dir.appendingPathComponent("slow.lua"), atomically: true, encoding: .utf8)
    var files: [String] = []
    func events(_ name: String, _ arguments: [String], in folder: URL = dir) throws -> Run {
      let path = dir.appendingPathComponent(name).path
      files.append(path)
      return try Binary.run(["--events", path] + arguments, in: folder)
    }
    // Under --progress none the reporter reads no starts: --events still gets every one.
    #expect(try events("all.ndjson", ["-k", "--progress", "none", "w.lua"]).status == 1)
    #expect(
      try events("example.ndjson", [Binary.packageRoot.appendingPathComponent("examples/wwdc-app.lua").path]).status
        == 0)
    let specs = Binary.packageRoot.appendingPathComponent("Tests/TestMode")
    files.append(dir.appendingPathComponent("test.ndjson").path)
    _ = try Binary.run(["test", "--events", files.last!, "outcomes_spec.lua"], in: specs)
    files.append(dir.appendingPathComponent("interrupted.ndjson").path)
    let started = try Binary.start(["--progress", "plain", "--events", files.last!, "slow.lua"], in: dir)
    let deadline = Date().addingTimeInterval(10)
    while Date() < deadline, !((try? String(contentsOf: started.out, encoding: .utf8)) ?? "").contains("start") {
      usleep(20_000)
    }
    kill(started.child.pid, SIGINT)
    #expect(Binary.finish(started, timeout: 20).status == 130)
    // A run os.exit ended says so in run_finish (and in the summary line); others say null.
    try #"operation { name = "s", sh = "sleep 5" } operation { name = "quit", run = function() os.exit(3) end }"#
      .write(to: dir.appendingPathComponent("exit.lua"), atomically: true, encoding: .utf8)
    let exited = try events("exit.ndjson", ["-j2", "--progress", "plain", "exit.lua"])
    #expect(
      exited.status == 3 && exited.stdout.contains("cancelled in ")
        && exited.stdout.contains(" (os.exit(3) ended the run)\n"),
      "\(exited.stdout)")
    let finishes = try files.map { try String(contentsOfFile: $0, encoding: .utf8) }.joined()
      .split(separator: "\n").filter { $0.contains(#""event":"run_finish""#) }
    #expect(finishes.filter { $0.contains(#""ended":"os.exit(3) ended the run""#) }.count == 1, "\(finishes)")
    #expect(finishes.filter { $0.contains(#""ended":null"#) }.count == finishes.count - 1, "\(finishes)")

    let check = Binary.finish(
      try Binary.start(
        [Binary.packageRoot.appendingPathComponent("scripts/check-events").path] + files,
        in: dir, program: Self.python!), timeout: 60)
    #expect(check.status == 0, "\(check.stdout)\(check.stderr)")
    for kind in [
      "run_start", "op_start", "op_start with after", "op_start with group", "op_retry", "op_finish", "output",
      "print", "activity", "progress (operation)", "progress (run)", "run_finish", "op_ready", "op_cancel",
      "op_pause", "op_resume", "queue_suspend", "queue_resume", "queue_limit", "progress with user_info"
    ] {
      #expect(
        check.stdout.range(of: #"\d+ \#(NSRegularExpression.escapedPattern(for: kind))\n"#, options: .regularExpression)
          != nil,
        "the runs made no \(kind) event: \(check.stdout)")
    }
  }
}
