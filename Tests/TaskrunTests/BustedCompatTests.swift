// `taskrun test` against busted itself: the fixture suites give the same results test by
// test (scripts/compat), luassert is the real library, busted's outputs, and describe bodies
// that never end.
import Foundation
import TestSupport
import Testing

@Suite struct BustedCompatTests {
  static let fixtures = TestModeTests.fixtures

  /// busted (Debian's lua-busted), which scripts/setup installs; without it the comparison
  /// is skipped, with the reason, never passed.
  static let busted = (ProcessInfo.processInfo.environment["PATH"] ?? "").split(separator: ":")
    .map { "\($0)/busted" }.first { FileManager.default.isExecutableFile(atPath: $0) }

  @Test(.enabled(if: busted != nil, "busted is not installed (apt-get install lua-busted)"))
  func theFixtureSuitesMatchBustedTestForTestMessagesIncluded() throws {
    let root = Binary.packageRoot
    let suites = [
      "\(Self.fixtures.path)/semantics::semantics_spec.lua statuses_spec.lua",
      "\(Self.fixtures.path)::broken",
      "\(Self.fixtures.path)/luassert::luassert_spec.lua",
      "\(Self.fixtures.path)/options",
      "\(Self.fixtures.path)/options::other/tags_spec.lua --tags=sl",
      "\(Self.fixtures.path)/options::--helper snapshot_helper.lua other/helper_events_spec.lua",
      "\(root.path)::spec/busted_spec.lua spec/isolation_a_spec.lua spec/isolation_b_spec.lua"
    ]
    let compat = Binary.finish(
      try Binary.start(
        ["--messages", "--taskrun", Binary.url.path] + suites, in: root,
        program: root.appendingPathComponent("scripts/compat").path), timeout: 120)
    #expect(compat.status == 0, "\(compat.stdout)\(compat.stderr)")
    #expect(compat.stdout.hasSuffix("\n\(suites.count) of \(suites.count) suites the same\n"))
  }

  @Test func luassertBehavesAsTheRealLibrary() throws {
    let run = try Binary.run(["test", "luassert_spec.lua"], in: Self.fixtures.appendingPathComponent("luassert"))
    #expect(run.status == 0 && run.stdout.hasSuffix("\n12 passed, 0 failed\n"), "\(run.stdout)\(run.stderr)")
  }

  @Test func failureMessagesAreLuassertsOwn() throws {
    let run = try Binary.run(
      ["test", "-o", "plainTerminal", "statuses_spec.lua"],
      in: Self.fixtures.appendingPathComponent("semantics"))
    #expect(
      run.stdout.hasPrefix("-***-.\n\nPending -> statuses_spec.lua:8\n"),
      "plainTerminal's marks and arrows: \(run.stdout)")
    #expect(run.stdout.contains("statuses_spec.lua:7: Expected to be truthy, but value was:\n(nil)"), "\(run.stdout)")
    #expect(
      run.stdout.contains("\n *[a] = {\n    [1] = 1\n   *[2] = 3 } }"), "same marks the first difference: \(run.stdout)"
    )
    #expect(run.stdout.contains("statuses_spec.lua:5: {\n  code = 1\n}"), "a table error is shown as busted shows it")
    #expect(run.stdout.contains("statuses_spec.lua:6: Nil error"))
  }

  @Test func hooksThatFailAreErrorsOfTheirOwn() throws {
    let run = try Binary.run(
      ["test", "-o", "TAP", "semantics_spec.lua"], in: Self.fixtures.appendingPathComponent("semantics"))
    let failed = run.stdout.split(separator: "\n").filter { $0.hasPrefix("not ok") }.map {
      $0.split(separator: " - ", maxSplits: 1).last.map(String.init) ?? ""
    }
    #expect(
      failed.filter { $0 == "a failing before_each before_each" }.count == 2,
      "one error per test, which does not count: \(failed)")
    #expect(
      failed.contains("a failing after_each after_each")
        && !failed.contains("a failing after_each still lets the test pass"))
    #expect(failed.contains("a failing setup setup") && !run.stdout.contains("keeps its tests from running"))
    #expect(
      failed.contains("a failing teardown teardown")
        && run.stdout.contains(" - a failing teardown runs the tests first\n"))
    #expect(failed.contains("a describe body that errors"))
    #expect(run.stdout.hasSuffix("# 15 passed, 7 failed\n"), "\(run.stdout)")
  }

  @Test func outputsKeepBustedsNames() throws {
    let folder = Self.fixtures.appendingPathComponent("semantics")
    let json = try Binary.run(["test", "-o", "json", "statuses_spec.lua"], in: folder)
    let object = try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any]
    #expect((object?["failures"] as? [Any])?.count == 2 && (object?["errors"] as? [Any])?.count == 3, "\(json.stdout)")
    #expect((object?["pendings"] as? [[String: Any]])?.first?["name"] as? String == "statuses pending inside a test")
    #expect(object?["duration"] is Double)

    let report = Scratch.root.appendingPathComponent("junit-\(UUID().uuidString).xml")
    defer { try? FileManager.default.removeItem(at: report) }
    let junit = try Binary.run(["test", "-o", "junit", "-Xoutput", report.path, "statuses_spec.lua"], in: folder)
    let xml = (try? String(contentsOf: report, encoding: .utf8)) ?? ""
    #expect(junit.status == 1 && xml.contains(#"tests="6" failures="2" errors="3" skipped="1""#), "\(xml)")
    let toStdout = try Binary.run(["test", "-o", "junit", "statuses_spec.lua"], in: folder)
    #expect(toStdout.stdout.hasPrefix(#"<?xml version="1.0" encoding="UTF-8"?>"#))

    let utf = try Binary.run(["test", "-o", "utfTerminal", "statuses_spec.lua"], in: folder)
    #expect(utf.stdout.hasPrefix("◼✱✱✱◼◌\n"), "\(utf.stdout)")
    let tap = try Binary.run(["test", "-o", "TAP", "statuses_spec.lua"], in: folder)
    #expect(tap.stdout.hasPrefix("TAP version 14\nnot ok 1 - statuses fails on an assertion\n"), "\(tap.stdout)")
  }
}

extension BustedCompatTests {
  static let runaway = """
    describe("fine", function() it("passes", function() end) end)
    describe("runaway", function()
      it("declared before the loop", function() end)
      while true do end
    end)
    describe("after", function() it("never declared", function() end) end)
    """

  func runawayFolder() throws -> URL {
    let folder = Scratch.root.appendingPathComponent("taskrun-runaway-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    try Self.runaway.write(to: folder.appendingPathComponent("runaway_spec.lua"), atomically: true, encoding: .utf8)
    return folder
  }

  @Test func aDescribeBodyObeysTimeout() throws {
    let run = Binary.finish(
      try Binary.start(["test", "--timeout", "0.5", "runaway_spec.lua"], in: try runawayFolder()), timeout: 30)
    #expect(run.status == 1)
    #expect(run.stdout.contains("runaway_spec.lua:2: the describe body timed out after 0.50 s"), "\(run.stdout)")
    #expect(run.stdout.hasSuffix("\n2 passed, 1 failed\n"), "the next describe still runs: \(run.stdout)")
  }

  @Test func ctrlCInADescribeBodyEndsTheRunAndSaysWhatDidNotRun() throws {
    let started = try Binary.start(["test", "-o", "TAP", "runaway_spec.lua"], in: try runawayFolder())
    let deadline = Date().addingTimeInterval(20)
    while Date() < deadline,
      !((try? String(contentsOf: started.out, encoding: .utf8)) ?? "").contains("ok 1 - fine passes")
    {
      usleep(20_000)
    }
    usleep(300_000)
    kill(started.child.pid, SIGINT)
    let run = Binary.finish(started, timeout: 20)
    #expect(run.status == 130, "\(run.stdout)\(run.stderr)")
    #expect(run.stdout.contains("not ok 2 - runaway\n"), "the interrupted body is an error: \(run.stdout)")
    #expect(run.stdout.contains("interrupted while its body ran"))
    #expect(
      run.stdout.hasSuffix(
        "1..2\n# 1 passed, 1 failed, 1 block not run (interrupted)\nBail out! Interrupted: 1 block not run\n"),
      "\(run.stdout)")
  }
}
