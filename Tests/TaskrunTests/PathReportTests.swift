// The critical path as a user sees it: the summary, run_finish and the trace name the same
// chain, and the trace is a valid document whatever happens to the run.
import Foundation
import TestSupport
import Testing

@Suite struct PathReportTests {
  static let workflow = """
    local a = operation { name = "a", sh = "sleep 0.1" }
    local g = group { name = "g", after = { a },
      operation { name = "g1", sh = "sleep 0.05" },
      operation { name = "g2", sh = "sleep 0.2" } }
    operation { name = "p", after = { g }, run = function()
      operation { name = "made", run = function() sleep(0.1) end }
    end }
    """

  func folder(_ script: String) throws -> URL {
    let dir = Scratch.root.appendingPathComponent("taskrun-path-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
    try script.write(to: dir.appendingPathComponent("w.lua"), atomically: true, encoding: .utf8)
    return dir
  }

  func json(_ url: URL) throws -> [String: Any] {
    try JSONSerialization.jsonObject(with: Data(contentsOf: url)) as? [String: Any] ?? [:]
  }

  @Test func summaryEventsAndTraceNameTheSameChain() throws {
    let dir = try folder(Self.workflow)
    let run = try Binary.run(
      ["--progress", "plain", "--events", "events.ndjson", "--trace", "trace.json", "w.lua"], in: dir)
    #expect(run.status == 0, "\(run.stdout)\(run.stderr)")
    // The group's last child carries the path through the group; the produced operation follows its producer.
    let line = run.stdout.split(separator: "\n").first { $0.hasPrefix("Critical path: ") }.map(String.init) ?? ""
    #expect(
      line.range(
        of:
          #"^Critical path: a \([0-9.]+ s\) →\[group\] g2 \([0-9.]+ s\) → p \([0-9.]+ s\) →\[produced\] made \([0-9.]+ s\)$"#,
        options: .regularExpression) != nil, "\(line)")

    let lines = try String(contentsOf: dir.appendingPathComponent("events.ndjson"), encoding: .utf8).split(
      separator: "\n")
    let finish = try lines.compactMap { try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
      .first { $0["event"] as? String == "run_finish" }
    #expect(finish?["critical_path"] as? [String] == ["a", "g2", "p", "made"])
    #expect(
      (finish?["critical_path_because"] as? [Any])?.map { $0 as? String } == [nil, "group", "dependency", "producer"])

    let events = try json(dir.appendingPathComponent("trace.json"))["traceEvents"] as? [[String: Any]] ?? []
    let steps = events.filter { $0["ph"] as? String == "X" }
      .compactMap { event -> (Int, String)? in
        guard let step = (event["args"] as? [String: Any])?["critical_path_step"] as? Int else { return nil }
        return (step, event["name"] as? String ?? "")
      }.sorted { $0.0 < $1.0 }.map(\.1)
    #expect(steps == ["a", "g2", "p", "made"], "the trace marks the same chain")
    let flows = events.filter { $0["ph"] as? String == "f" }.compactMap { $0["name"] as? String }
    #expect(flows.contains("producer") && flows.contains("group") && flows.contains("dependency"), "\(flows)")
    let processes = events.filter { $0["name"] as? String == "process_name" }
      .compactMap { ($0["args"] as? [String: Any])?["name"] as? String }
    #expect(processes == ["taskrun", "group g"], "a group nests its children in a process of its own")
  }

  @Test func theTraceIsValidWhenTheScriptDoesNotLoadOrTheRunIsInterrupted() throws {
    let broken = try folder("error('no')")
    let failed = try Binary.run(["--trace", "trace.json", "w.lua"], in: broken)
    #expect(failed.status == 2)
    #expect((try json(broken.appendingPathComponent("trace.json"))["traceEvents"] as? [Any])?.isEmpty == true)

    let slow = try folder(#"operation { name = "s", sh = "sleep 5" }"#)
    let started = try Binary.start(["--progress", "plain", "--trace", "trace.json", "w.lua"], in: slow)
    let deadline = Date().addingTimeInterval(10)
    while Date() < deadline, !((try? String(contentsOf: started.out, encoding: .utf8)) ?? "").contains("start") {
      usleep(20_000)
    }
    kill(started.child.pid, SIGINT)
    let run = Binary.finish(started, timeout: 20)
    #expect(run.status == 130)
    let events = try json(slow.appendingPathComponent("trace.json"))["traceEvents"] as? [[String: Any]] ?? []
    #expect(events.contains { $0["name"] as? String == "s" && $0["cat"] as? String == "cancelled" }, "\(events)")
  }

  @Test func operationProgressEventsAreOneConsistentSet() throws {
    let dir = try folder(
      """
      operation { name = "dl", run = function()
        local p = progress { total = 4, description = "downloading" }
        for i = 1, 4 do p.completed = i; p.additional_description = i .. " of 4 files"; sleep(0.1) end
      end }
      """)
    let run = try Binary.run(["-q", "--events", "events.ndjson", "w.lua"], in: dir)
    #expect(run.status == 0, "\(run.stderr)")
    let events = try String(contentsOf: dir.appendingPathComponent("events.ndjson"), encoding: .utf8).split(
      separator: "\n"
    )
    .compactMap { try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
    .filter { $0["event"] as? String == "progress" && $0["operation"] as? String == "dl" }
    #expect(!events.isEmpty)
    for event in events {
      let completed = event["completed"] as? Int ?? -1, total = event["total"] as? Int ?? -1
      #expect(total == 4, "the body's progress, not the wrapper's 0 of 1: \(event)")
      #expect(abs((event["fraction"] as? Double ?? -1) - Double(completed) / Double(total)) < 1e-3, "\(event)")
      #expect(event["description"] as? String == "downloading", "\(event)")
    }
    #expect(
      events.last?["completed"] as? Int == 4 && events.last?["fraction"] as? Double == 1,
      "the final event keeps it: \(events.last!)")
  }
}
