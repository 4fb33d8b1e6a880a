// Machine-readable reports: --events, --trace and taskrun graph.
import Foundation
import TestSupport
import Testing

@Suite struct ReportTests {
  func temporaryFile(_ name: String) -> URL {
    Scratch.root.appendingPathComponent("taskrun-\(UUID().uuidString)-\(name)")
  }

  func objects(_ text: String) throws -> [[String: Any]] {
    try text.split(separator: "\n").map {
      try #require(try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any])
    }
  }

  @Test func eventsAreOneJSONObjectPerLineWithTheDocumentedFields() throws {
    let file = temporaryFile("events.ndjson")
    defer { try? FileManager.default.removeItem(at: file) }
    let run = try Binary.run(["-k", "--events", file.path, "keep_going.lua"])
    #expect(run.status == 1)
    let events = try objects(try String(contentsOf: file, encoding: .utf8))
    #expect(events.first?["event"] as? String == "run_start")
    #expect(events.last?["event"] as? String == "run_finish")
    #expect(events.allSatisfy { $0["time"] is Double || $0["time"] is Int })
    let finishes = events.filter { $0["event"] as? String == "op_finish" }
    let outcomes = Dictionary(
      uniqueKeysWithValues: finishes.map { ($0["operation"] as! String, $0["outcome"] as! String) })
    #expect(outcomes == ["test": "failed", "package": "skipped", "docs": "succeeded"])
    #expect(
      finishes.first { $0["operation"] as? String == "test" }?["error"] as? String == "exited with status 2: exit 2")
    #expect(finishes.first { $0["operation"] as? String == "test" }?["error_kind"] as? String == "command")
    #expect(finishes.first { $0["operation"] as? String == "package" }?["error_kind"] as? String == "dependency")
    #expect(events.last?["failed"] as? Int == 1 && events.last?["skipped"] as? Int == 1)
  }

  @Test func progressAndPrintAreEvents() throws {
    let dir = Scratch.root.appendingPathComponent("taskrun-ev-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
    try """
    operation { name = "steps", run = function()
      local p = progress { total = 4 }
      for i = 1, 4 do p.completed = i sleep(0.1) end
      print("done stepping")
    end }
    """.write(to: dir.appendingPathComponent("w.lua"), atomically: true, encoding: .utf8)
    try """
    operation { name = "net", observers = { activity "network" }, sh = "true" }
    """.write(to: dir.appendingPathComponent("a.lua"), atomically: true, encoding: .utf8)
    let activity = try objects(Binary.finish(try Binary.start(["--events", "-", "a.lua"], in: dir)).stderr)
      .filter { $0["event"] as? String == "activity" }
    #expect(activity.map { "\($0["label"] ?? "")=\($0["count"] ?? "")" } == ["network=1", "network=0"])
    let run = Binary.finish(try Binary.start(["--events", "-", "w.lua"], in: dir))
    let events = try objects(run.stderr)
    let mine = events.filter { $0["event"] as? String == "progress" && $0["operation"] as? String == "steps" }
    #expect(mine.count >= 2 && mine.count <= 8, "coalesced, not one per update")
    #expect(
      mine.last?["fraction"] as? Double == 1 || mine.last?["fraction"] as? Int == 1,
      "the final state is always reported")
    #expect(
      mine.contains { ($0["additional_description"] as? String)?.hasSuffix(" of 4") == true },
      "an operation is described by the progress its body made")
    let overall = events.filter { $0["event"] as? String == "progress" && $0["operation"] == nil }
    #expect(overall.last?["completed"] as? Int == 1 && overall.last?["total"] as? Int == 1)
    #expect(
      events.contains {
        $0["event"] as? String == "print" && $0["text"] as? String == "done stepping"
          && $0["operation"] as? String == "steps"
      })
  }

  @Test func outputEventsCarryTheStreamAndText() throws {
    let run = Binary.finish(try Binary.start(["--events", "-", "verbose.lua"]))
    let output = try objects(run.stderr).filter { $0["event"] as? String == "output" }
    #expect(output.first?["operation"] as? String == "greet")
    #expect(output.first?["stream"] as? String == "stdout")
    #expect(output.map { $0["text"] as? String ?? "" }.joined() == "hello\nworld\n")
  }

  @Test func traceHasOneCompleteEventPerOperationOnLanesThatShowParallelism() throws {
    let file = temporaryFile("trace.json")
    defer { try? FileManager.default.removeItem(at: file) }
    #expect(try Binary.run(["-j3", "--trace", file.path, "runaway.lua"]).status == 1)
    let document = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: file)) as? [String: Any])
    let events = try #require(document["traceEvents"] as? [[String: Any]])
    let complete = events.filter { $0["ph"] as? String == "X" }
    #expect(Set(complete.map { $0["name"] as! String }) == ["spin", "ticker", "hang"])
    #expect(Set(complete.map { $0["tid"] as! Int }).count == 3, "three operations ran at once")
    #expect(events.contains { $0["ph"] as? String == "C" && $0["name"] as? String == "running" })
  }

  @Test func graphPrintsDotMermaidAndJSONWithoutRunning() throws {
    let dot = try Binary.run(["graph", "dry_run.lua", "package"])
    #expect(dot.status == 0)
    #expect(dot.stdout.contains(#""fetch" -> "build";"#) && dot.stdout.contains(#""build" -> "package";"#))
    #expect(!dot.stdout.contains("docs") && !dot.stdout.contains("packaging"))
    let mermaid = try Binary.run(["graph", "--format", "mermaid", "dry_run.lua"])
    #expect(mermaid.stdout.hasPrefix("flowchart LR\n") && mermaid.stdout.contains("n1 --> n2"))
    let json = try Binary.run(["graph", "dry_run.lua", "--format", "json"])
    let document = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any])
    let ops = try #require(document["operations"] as? [[String: Any]])
    #expect(ops.map { $0["name"] as! String } == ["fetch", "build", "package", "docs"])
    #expect(ops[1]["after"] as? [String] == ["fetch"])
  }

  @Test func graphDrawsGroupsAndConditionDependencies() throws {
    let dir = Scratch.root.appendingPathComponent("taskrun-graph-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
    try """
    local a = operation { name = "a", sh = "false" }
    local g = group { name = "g", after = { a },
      operation { name = "g1", sh = "true" }, operation { name = "g2", sh = "true" } }
    local login = condition { name = "logged in",
      dependency = function() return operation { name = "login", sh = "touch token" } end,
      evaluate = function() return true end }
    operation { name = "save", after = { g }, conditions = { login, mutex "db" }, sh = "true" }
    """.write(to: dir.appendingPathComponent("w.lua"), atomically: true, encoding: .utf8)
    let dot = try Binary.run(["graph", "w.lua"], in: dir)
    #expect(dot.status == 0, "\(dot.stderr)")
    #expect(
      dot.stdout.contains(
        """
          "g" [label="group g", shape=folder];
          subgraph "cluster_g" {
            label="g";
            style=rounded;
            "g1" [label="g1\\nsh: true"];
            "g2" [label="g2\\nsh: true"];
          }
        """), "\(dot.stdout)")
    #expect(dot.stdout.contains(#""condition 1 of save" [shape=diamond, label="logged in"];"#))
    #expect(dot.stdout.contains(#""login" -> "condition 1 of save";"#) && dot.stdout.contains("mutex db"))
    #expect(!FileManager.default.fileExists(atPath: dir.appendingPathComponent("token").path), "nothing ran")
    let mermaid = try Binary.run(["graph", "--format", "mermaid", "w.lua"], in: dir)
    #expect(mermaid.stdout.contains("  subgraph n4 [\"g\"]\n    n2[\"g1<br>sh: true\"]\n"), "\(mermaid.stdout)")
    #expect(mermaid.stdout.contains("{\"logged in\"} -.-> n5"))
    let json = try Binary.run(["graph", "--format", "json", "w.lua"], in: dir)
    let ops = try #require(
      (try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any])?["operations"]
        as? [[String: Any]])
    #expect(ops.first { $0["name"] as? String == "g1" }?["group"] as? String == "g")
    #expect(ops.first { $0["name"] as? String == "g" }?["is_group"] as? Bool == true)
    let save = ops.first { $0["name"] as? String == "save" }
    #expect((save?["conditions"] as? [[String: Any]])?.first?["dependency"] as? String == "login")
    #expect(ops.contains { ($0["needed_by_condition"] as? [String: Any])?["of"] as? String == "save" })
  }

  @Test func graphOfABrokenScriptIsAScriptError() throws {
    let run = try Binary.run(["graph", "cycle.lua"])
    #expect(run.status == 2 && run.stderr.contains("dependency cycle"))
  }
}
