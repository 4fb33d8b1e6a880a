// Outcomes the engine decides, seen through the binary: when = "failed" far downstream, names in after, deadlocks, os.exit, the critical path.
import Foundation
import TestSupport
import Testing

@Suite struct EngineOutcomeTests {
  func run(_ script: String, _ arguments: [String] = [], timeout: Double = 60) throws -> Run {
    let dir = Scratch.root.appendingPathComponent("taskrun-outcome-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
    try Data(script.utf8).write(to: dir.appendingPathComponent("w.lua"))
    return Binary.finish(try Binary.start(["--progress", "plain"] + arguments + ["w.lua"], in: dir), timeout: timeout)
  }

  @Test func whenFailedSeesACancellationBesideASkipThatSawNoFailure() throws {
    // y waits for x (skipped: nothing failed) and c (cancelled when 'bad' stopped the run):
    // y is skipped for c, and the cancellation behind it reaches notify. 'bad' waits for
    // 'fine', so x has been skipped before 'bad' fails (else y is cancelled with c, unstarted).
    let run = try run(
      """
      operation { name = "fine", sh = "true" }
      operation { name = "x", after = { "fine" }, when = "failed", sh = "true" }
      operation { name = "long", sh = "sleep 3" }
      operation { name = "bad", after = { "fine" }, sh = "false" }
      operation { name = "c", after = { "long" }, sh = "true" }
      operation { name = "y", after = { "x", "c" }, sh = "true" }
      operation { name = "notify", after = { "y" }, when = "failed", run = function() print("notified") end }
      """, ["-j4"])
    #expect(run.status == 1, "\(run.stdout)\(run.stderr)")
    #expect(run.stdout.contains("skipped   x: no dependency failed"), "\(run.stdout)")
    #expect(run.stdout.contains("cancelled c:"), "\(run.stdout)")
    #expect(run.stdout.contains("skipped   y: dependency 'c' cancelled"), "\(run.stdout)")
    #expect(run.stdout.contains("notified") && run.stdout.contains("ok        notify"), "\(run.stdout)")
  }

  @Test func namesInAfterResolveWhenTheNextRunNeedsThemAfterAnEarlierRun() throws {
    let run = try run(
      """
      assert(run(operation { name = "x", sh = "true" }) == true)
      operation { name = "a", after = { "b" }, run = function() print("a ran") end }
      operation { name = "b", run = function() print("b ran") end }
      local c = operation { name = "c", after = { "d" }, run = function() print("c ran") end }
      operation { name = "d", run = function() print("d ran") end }
      assert(run(c) == true)
      """)
    #expect(run.status == 0, "\(run.stdout)\(run.stderr)")
    let lines = run.stdout.split(separator: "\n")
    for (first, then) in [("b ran", "a ran"), ("d ran", "c ran")] {
      let i = lines.firstIndex(of: Substring(first)), j = lines.firstIndex(of: Substring(then))
      #expect(i != nil && j != nil && i! < j!, "\(first) before \(then): \(run.stdout)")
    }
  }

  @Test func anUnknownNameAfterAnEarlierRunIsStillAnErrorAtItsLine() throws {
    let run = try run(
      """
      assert(run(operation { name = "x", sh = "true" }) == true)
      operation { name = "a", after = { "nope" }, sh = "true" }
      """)
    #expect(run.status == 2, "\(run.stdout)\(run.stderr)")
    #expect(run.stderr.contains("w.lua:2: 'a' depends on 'nope', but no operation has that name"), "\(run.stderr)")
  }

  @Test func theCriticalPathGoesThroughASkipToTheFailureBehindIt() throws {
    let run = try run(
      """
      local build = operation { name = "build", sh = "sleep 1; false" }
      local test = operation { name = "test", after = { build }, sh = "true" }
      operation { name = "notify", after = { test }, when = "failed", sh = "true" }
      """)
    #expect(run.status == 1, "\(run.stdout)\(run.stderr)")
    let line = run.stdout.split(separator: "\n").first { $0.hasPrefix("Critical path: ") } ?? ""
    #expect(
      line.hasPrefix("Critical path: build (1.") && line.contains(" s) → notify (0.") && line.hasSuffix(" s)")
        && !line.contains("test"),
      "\(run.stdout)")
  }

  @Test func theCriticalPathListsAnOperationThatFailedAtItsCondition() throws {
    let run = try run(
      """
      local build = operation { name = "build", sh = "sleep 1" }
      local deploy = operation { name = "deploy", after = { build }, conditions = { exists "/no/such/path" }, sh = "true" }
      operation { name = "notify", after = { deploy }, when = "failed", sh = "true" }
      """)
    #expect(run.status == 1, "\(run.stdout)\(run.stderr)")
    let line = run.stdout.split(separator: "\n").first { $0.hasPrefix("Critical path: ") } ?? ""
    #expect(
      line.hasPrefix("Critical path: build (1.") && line.contains(" → deploy (0.00 s) → notify ("), "\(run.stdout)")
  }

  @Test func aDeadlockThroughAGroupsMutexNamesTheMutexItsHolderAndTheCycle() throws {
    // g holds mutex m while its child c waits for x, which waits for m.
    let run = try run(
      """
      local g = group { name = "g", conditions = { mutex "m" },
        operation { name = "c", after = { "x" }, sh = "true" } }
      local x = operation { name = "x", conditions = { mutex "m" }, sh = "true" }
      """)
    #expect(run.status == 1, "\(run.stdout)\(run.stderr)")
    let cycle = "'c' waits for 'x', which waits for mutex 'm' (held by 'g'), which waits for 'c'"
    #expect(
      run.stdout.contains(
        "cancelled x: never started: deadlock: 'x' waits for mutex 'm' (held by 'g'), which waits for 'c', which waits for 'x'\n"
      ),
      "\(run.stdout)")
    #expect(run.stdout.contains("cancelled c: never started: deadlock: \(cycle)\n"), "\(run.stdout)")
    #expect(run.stdout.contains("cancelled g: 'c' cancelled: never started: deadlock: \(cycle)\n"), "\(run.stdout)")
  }

  /// A long chain's critical path is one readable line: the first and last ten steps and the
  /// rest counted between them (a chain of a million printed 35 MB on one line).
  @Test func aLongCriticalPathShowsItsEndsAndCountsTheRest() throws {
    let run = try run("local p\nfor i = 1, 100 do p = operation { name = \"t\" .. i, after = { p } } end\n")
    #expect(run.status == 0, "\(run.stdout)\(run.stderr)")
    let line = run.stdout.split(separator: "\n").first { $0.hasPrefix("Critical path: ") } ?? ""
    #expect(line.hasPrefix("Critical path: t1 (") && line.contains(" → t10 (") && !line.contains("t11 ("), "\(line)")
    #expect(
      line.contains(" → … 80 more steps (") && line.contains(" → t91 (") && line.contains(" → t100 (")
        && line.hasSuffix(" s)"), "\(line)")
    let short = try self.run("local p\nfor i = 1, 21 do p = operation { name = \"t\" .. i, after = { p } } end\n")
    let whole = short.stdout.split(separator: "\n").first { $0.hasPrefix("Critical path: ") } ?? ""
    #expect(whole.contains("t11 (") && !whole.contains("more steps"), "\(whole)")
  }
}
