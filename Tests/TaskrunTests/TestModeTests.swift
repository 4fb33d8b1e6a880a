// taskrun test: busted specs through the binary, with the fixtures in Tests/TestMode.
import Foundation
import TestSupport
import Testing

#if canImport(FoundationXML)
import FoundationXML
#endif

@Suite struct TestModeTests {
  static let fixtures = Binary.packageRoot.appendingPathComponent("Tests/TestMode")

  func test(_ arguments: [String]) throws -> Run {
    try Binary.run(["test"] + arguments, in: Self.fixtures)
  }

  @Test func theReportShowsEachOutcomeAndEndsWithTheCounts() throws {
    let run = try test(["outcomes_spec.lua"])
    #expect(run.status == 1, "a failure makes the run fail: \(run.stdout)")
    #expect(run.stdout.hasPrefix("●◼✱◌◌"), "one mark per test, in order: \(run.stdout)")
    #expect(run.stdout.contains("hello from a test"), "what a test prints is shown")
    #expect(
      run.stdout.contains(
        """
        Failure → outcomes_spec.lua:4
        outcomes compares
        outcomes_spec.lua:4: Expected objects to be equal.
        Passed in:
        (number) 4
        Expected:
        (number) 5
        """), "\(run.stdout)")
    #expect(
      run.stdout.contains(
        "Error → outcomes_spec.lua:5\noutcomes breaks\noutcomes_spec.lua:5: attempt to index a nil value (local 'missing')"
      ))
    #expect(
      run.stdout.contains(
        "Pending → outcomes_spec.lua:7\noutcomes becomes pending\noutcomes_spec.lua:7: waiting for the API"))
    #expect(run.stdout.contains("6 tests from 1 file in "))
    #expect(run.stdout.hasSuffix("\n2 passed, 2 failed, 2 skipped\n"), "the closing line: \(run.stdout)")
  }

  @Test func verboseNamesEachTestWithItsTime() throws {
    let run = try test(["-v", "--filter", "adds", "outcomes_spec.lua"])
    #expect(run.status == 0)
    #expect(
      run.stdout.range(of: #"ok +outcomes adds \(\d+\.\d\d s\)"#, options: .regularExpression) != nil, "\(run.stdout)")
    #expect(run.stdout.hasSuffix("1 passed, 0 failed\n"))
  }

  @Test func tapIsVersion14WithAPlanAndDiagnostics() throws {
    let run = try test(["--tap", "outcomes_spec.lua"])
    let lines = run.stdout.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
    #expect(Array(lines.prefix(2)) == ["TAP version 14", "ok 1 - outcomes adds"], "\(run.stdout)")
    #expect(lines.contains("not ok 2 - outcomes compares"))
    #expect(lines.contains("  severity: fail") && lines.contains("  severity: error"))
    #expect(lines.contains("    outcomes_spec.lua:4: Expected objects to be equal."))
    #expect(lines.contains("ok 4 - outcomes is declared pending # SKIP pending"))
    #expect(lines.contains("ok 5 - outcomes becomes pending # SKIP outcomes_spec.lua:7: waiting for the API"))
    #expect(lines.contains(##"ok 6 - outcomes prints and waits \#slow"##), "'#' is escaped in descriptions")
    #expect(lines.contains("# hello from a test"), "printed text becomes a TAP comment")
    #expect(run.stdout.hasSuffix("1..6\n# 2 passed, 2 failed, 2 skipped\n"), "the plan comes last")
    #expect(run.status == 1)
  }

  @Test func junitIsFlatWithTimesAndFailureMessages() throws {
    let file = Scratch.root.appendingPathComponent("junit-\(UUID().uuidString).xml")
    let run = try test(["--junit", file.path, "outcomes_spec.lua", "order_spec.lua"])
    #expect(run.status == 1)
    let document = try XMLDocument(contentsOf: file)
    let root = try #require(document.rootElement())
    #expect(root.name == "testsuites")
    #expect(root.attribute(forName: "tests")?.stringValue == "12")
    #expect(root.attribute(forName: "failures")?.stringValue == "1")
    #expect(root.attribute(forName: "errors")?.stringValue == "1")
    #expect(root.attribute(forName: "skipped")?.stringValue == "2")
    let suites = root.elements(forName: "testsuite")
    #expect(suites.map { $0.attribute(forName: "name")?.stringValue } == ["outcomes_spec.lua", "order_spec.lua"])
    let cases = suites.flatMap { $0.elements(forName: "testcase") }
    #expect(cases.count == 12)
    #expect(cases.allSatisfy { $0.attribute(forName: "time") != nil }, "every testcase has a time")
    #expect(cases.allSatisfy { $0.elements(forName: "testcase").isEmpty }, "never nested")
    let failure = try #require(
      cases.first { $0.attribute(forName: "name")?.stringValue == "outcomes compares" }?
        .elements(forName: "failure").first)
    #expect(failure.attribute(forName: "message")?.stringValue == "outcomes_spec.lua:4: Expected objects to be equal.")
    #expect(failure.stringValue?.contains("Passed in:\n(number) 4") == true)
  }

  @Test func filtersAndTagsChooseTheTests() throws {
    let only = try test(["--filter", "^outcomes a", "outcomes_spec.lua"])
    #expect(only.stdout.hasSuffix("1 passed, 0 failed\n"), "\(only.stdout)")
    let out = try test(["--filter-out", "compares", "--filter-out", "breaks", "outcomes_spec.lua"])
    #expect(out.stdout.hasSuffix("2 passed, 0 failed, 2 skipped\n"), "\(out.stdout)")
    #expect(out.status == 0)
    let tagged = try test(["-t", "slow", "outcomes_spec.lua"])
    #expect(tagged.stdout.hasSuffix("1 passed, 0 failed\n"), "\(tagged.stdout)")
    let excluded = try test(["--exclude-tags", "slow,other", "outcomes_spec.lua"])
    #expect(excluded.stdout.hasSuffix("1 passed, 2 failed, 2 skipped\n"), "\(excluded.stdout)")
  }

  @Test func aShuffleIsRepeatedByItsSeed() throws {
    func order(_ run: Run) -> [String] {
      run.stdout.split(separator: "\n").filter { $0.hasPrefix("ran ") }.map(String.init)
    }
    let plain = try test(["order_spec.lua"])
    #expect(order(plain) == (1...6).map { "ran \($0)" }, "declared order without --shuffle")
    let shuffled = try test(["--shuffle", "order_spec.lua"])
    let seedLine = try #require(shuffled.stdout.split(separator: "\n").first)
    let seed = try #require(seedLine.split(separator: " ").dropFirst(3).first.map(String.init))
    #expect(seedLine.hasPrefix("Randomized with seed \(seed)"), "\(shuffled.stdout)")
    let again = try test(["--shuffle", "--seed", seed, "order_spec.lua"])
    #expect(order(again) == order(shuffled), "the printed seed repeats the order")
    #expect(Set(order(again)) == Set(order(plain)), "every test runs once")
    let orders = try (1...4).map { try order(test(["--shuffle", "--seed", "\($0)", "order_spec.lua"])) }
    #expect(orders.contains { $0 != order(plain) }, "some seed changes the order")
  }

  @Test func aTimeoutStopsARunawayTestAndTheNextOneRuns() throws {
    let run = try test(["--timeout", "0.3", "slow"])
    #expect(run.status == 1)
    #expect(run.stdout.contains("slow/runaway_spec.lua:3: timed out after 0.30 s"), "\(run.stdout)")
    #expect(run.stdout.contains("slow/runaway_spec.lua:4: timed out after 0.30 s"))
    #expect(run.stdout.hasSuffix("1 passed, 2 failed\n"))
  }

  @Test func aFileThatDoesNotLoadIsAnErrorAndTheOthersStillRun() throws {
    let run = try test(["broken"])
    #expect(run.status == 1)
    #expect(run.stdout.contains("Error → broken/aa_syntax_spec.lua:4"), "\(run.stdout)")
    #expect(run.stdout.contains("'end' expected (to close 'function' at line 1) near <eof>"))
    #expect(
      run.stdout.contains("Error → broken/cc_raises_spec.lua:3\nsuite broken/cc_raises_spec.lua\n"),
      "a raising top level is the suite's error, as busted names it")
    #expect(run.stdout.hasSuffix("1 passed, 2 failed\n"))
  }

  @Test func eventsAreSharedWithTheRunMode() throws {
    let run = try test(["--events", "-", "--filter", "adds", "outcomes_spec.lua"])
    let finish = run.stderr.split(separator: "\n").first { $0.contains(#""event":"op_finish""#) }
    #expect(finish?.contains(#""operation":"outcomes adds""#) == true, "\(run.stderr)")
    #expect(finish?.contains(#""outcome":"succeeded""#) == true)
  }

  @Test(arguments: [
    (["no-such-dir"], "Cannot find file or directory: no-such-dir"),
    (["--timeout", "0", "outcomes_spec.lua"], "--timeout must be a number of seconds"),
    (["--tap", "-v", "outcomes_spec.lua"], "--tap and -v cannot be used together"),
    (
      ["--junit", "/no/such/dir/report.xml", "outcomes_spec.lua"],
      "cannot write the JUnit report to '/no/such/dir/report.xml'"
    )
  ])
  func usageErrorsExitTwo(_ arguments: [String], _ message: String) throws {
    let run = try test(arguments)
    #expect(run.status == 2)
    #expect(run.stderr.contains(message), "\(run.stderr)")
  }

  @Test func withoutPathsItLooksForSpecThenTests() throws {
    let empty = Scratch.root.appendingPathComponent("taskrun-empty-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: empty, withIntermediateDirectories: true)
    let none = try Binary.run(["test"], in: empty)
    #expect(none.status == 2)
    #expect(none.stderr.contains("no spec/ or tests/ folder here"), "\(none.stderr)")
    let tests = empty.appendingPathComponent("tests")
    try FileManager.default.createDirectory(at: tests, withIntermediateDirectories: true)
    try #"it("is found", function() end)"#.write(
      to: tests.appendingPathComponent("found_spec.lua"), atomically: true, encoding: .utf8)
    try "not a test".write(to: tests.appendingPathComponent("helper.lua"), atomically: true, encoding: .utf8)
    try "not a test".write(to: tests.appendingPathComponent("other_test.lua"), atomically: true, encoding: .utf8)
    let found = try Binary.run(["test"], in: empty)
    #expect(found.status == 0, "\(found.stdout)\(found.stderr)")
    #expect(found.stdout.hasSuffix("\n1 passed, 0 failed\n"), "only names matching busted's _spec run: \(found.stdout)")
  }
}

extension TestModeTests {
  @Test func theReadmeCartExampleRunsAsShown() throws {
    let cart = Binary.packageRoot.appendingPathComponent("examples/cart")
    let run = try Binary.run(["test"], in: cart)
    #expect(run.status == 0, "\(run.stdout)\(run.stderr)")
    #expect(run.stdout.hasPrefix("●●◌\n\nPending → spec/cart_spec.lua:19\na cart applies coupons\n"), "\(run.stdout)")
    #expect(run.stdout.hasSuffix("\n2 passed, 0 failed, 1 skipped\n"))
  }
}

extension TestModeTests {
  @Test func aBustedFileSaysWhereTheSpecsAreAndHowTheyAreNamed() throws {
    let project = Self.fixtures.appendingPathComponent("busted-config")
    let run = try Binary.run(["test", "-v"], in: project)
    #expect(run.status == 0, "\(run.stdout)\(run.stderr)")
    #expect(run.stdout.contains("ok      greet greets"), "ROOT, pattern and lpath apply: \(run.stdout)")
    #expect(!run.stdout.contains("is slow"), "its exclude-tags apply")
    #expect(run.stdout.hasSuffix("\n1 passed, 0 failed\n"), "helper.lua does not match the pattern")
    let tagged = try Binary.run(["test", "--exclude-tags", "none"], in: project)
    #expect(tagged.stdout.hasSuffix("\n1 passed, 1 failed\n"), "the command line wins: \(tagged.stdout)")
  }

  @Test func aBustedFileWithOnlyADefaultTaskIsRead() throws {
    let project = Scratch.root.appendingPathComponent("taskrun-busted-\(UUID().uuidString)")
    try FileManager.default.copyItem(at: Self.fixtures.appendingPathComponent("busted-config"), to: project)
    try
      #"return { default = { lpath = "lib/?.lua", ROOT = { "test" }, pattern = "^check_", ["exclude-tags"] = "slow" } }"#
      .write(to: project.appendingPathComponent(".busted"), atomically: true, encoding: .utf8)
    let run = try Binary.run(["test", "-v"], in: project)
    #expect(run.status == 0 && run.stdout.hasSuffix("\n1 passed, 0 failed\n"), "\(run.stdout)\(run.stderr)")
  }
}

extension TestModeTests {
  @Test func ctrlCEndsTheRunAndCountsTheTestsItKeptFromRunning() throws {
    let started = try Binary.start(
      ["test", "--tap", "interrupted_spec.lua"],
      in: Self.fixtures.appendingPathComponent("interrupted"))
    let deadline = Date().addingTimeInterval(20)
    while Date() < deadline, !((try? String(contentsOf: started.out, encoding: .utf8)) ?? "").contains("sleeping now") {
      usleep(20_000)
    }
    kill(started.child.pid, SIGINT)
    let run = Binary.finish(started, timeout: 20)
    #expect(run.status == 130)
    #expect(run.stdout.contains("ok 1 - interrupted passes\n"), "\(run.stdout)")
    #expect(run.stdout.contains("not ok 2 - interrupted sleeps\n"))
    #expect(!run.stdout.contains("never starts"), "tests that never started are not reported as failures")
    #expect(
      run.stdout.hasSuffix(
        "1..2\n# 1 passed, 1 failed, 2 tests not run (interrupted)\nBail out! Interrupted: 2 tests not run\n"),
      "\(run.stdout)")
  }

  /// Runs `taskrun test ARGUMENTS` in the interrupted fixtures, sends Ctrl-C once the spec's
  /// top level has written its marker, and returns what it reported.
  private func interruptTopLevel(_ arguments: [String]) throws -> Run {
    let marker = Scratch.root.appendingPathComponent("taskrun-toplevel-\(UUID().uuidString)")
    let started = try Binary.start(
      ["test"] + arguments, in: Self.fixtures.appendingPathComponent("interrupted"),
      environment: ["TOPLEVEL_MARKER": marker.path])
    let deadline = Date().addingTimeInterval(20)
    while Date() < deadline, !FileManager.default.fileExists(atPath: marker.path) { usleep(20_000) }
    usleep(300_000)  // into the sleep or the read, not only past the marker
    kill(started.child.pid, SIGINT)
    return Binary.finish(started, timeout: 20)
  }

  /// A sleep, a command's output being read, a busy loop, and a sleep in the body --timeout
  /// runs apart.
  @Test(arguments: [
    ["top_sleep_spec.lua"], ["top_popen_spec.lua"], ["top_loop_spec.lua"],
    ["--timeout", "60", "top_sleep_spec.lua"]
  ])
  func ctrlCInAFilesTopLevelPointsAtItsLineAndSaysTheRunWasInterrupted(arguments: [String]) throws {
    let options = Array(arguments.dropLast()), spec = arguments.last!
    let plain = try interruptTopLevel(options + [spec])
    #expect(plain.status == 130)
    #expect(
      plain.stdout.contains("Error → \(spec):4\nsuite \(spec)\n\(spec):4: interrupted while its body ran"),
      "the line it stood on, the file as a suite: \(plain.stdout)")
    #expect(plain.stdout.hasSuffix("\n0 passed, 1 failed (interrupted)\n"), "\(plain.stdout)")
    let tap = try interruptTopLevel(options + ["--tap", spec])
    #expect(tap.status == 130)
    #expect(tap.stdout.contains("not ok 1 - suite \(spec)\n"), "\(tap.stdout)")
    #expect(tap.stdout.contains("    file: \(spec)\n    line: 4\n"), "\(tap.stdout)")
    #expect(
      tap.stdout.hasSuffix("1..1\n# 0 passed, 1 failed (interrupted)\nBail out! Interrupted\n"),
      "the plan and counts come before the bail out, which a harness reads last: \(tap.stdout)")
  }
}
