// busted's output handlers in `taskrun test`: -o gtest against busted's own output byte for
// byte (timings aside), TAP, JUnit and json against busted's test by test, handlers given by
// path or module (with -Xoutput), one that does not load, and -o sound / -s. The fixture is
// Tests/TestMode/handlers: outputs_spec.lua has a pass, a failure, an error, two pending
// tests, a nested pass and a describe whose body errors.
import Foundation
import TestSupport
import Testing

@Suite struct BustedCompatOutputTests {
  static let folder = TestModeTests.fixtures.appendingPathComponent("handlers")
  static let bustedPath = BustedCompatTests.busted

  func taskrun(_ arguments: [String], environment: [String: String] = [:]) throws -> Run {
    Binary.finish(try Binary.start(["test"] + arguments, in: Self.folder, environment: environment))
  }

  func underBusted(_ arguments: [String]) throws -> Run {
    Binary.finish(try Binary.start(arguments, in: Self.folder, program: Self.bustedPath ?? "busted"))
  }

  /// Output with the timings ("(0.08 ms)", "(9.70 ms total)") made equal: all that may differ.
  static func untimed(_ text: String) -> String {
    text.replacingOccurrences(of: #"\([0-9]+\.[0-9]+ ms( total)?\)"#, with: "(T)", options: .regularExpression)
  }

  static let gtest = """
    [==========] Running tests from scanned files.
    [----------] Global test environment setup.
    [----------] Running tests from outputs_spec.lua
    [ RUN      ] outputs_spec.lua @ 3: outputs passes
    [       OK ] outputs_spec.lua @ 3: outputs passes (T)
    [ RUN      ] outputs_spec.lua @ 7: outputs fails
    outputs_spec.lua:8: Expected objects to be equal.
    Passed in:
    (number) 2
    Expected:
    (number) 1
    [  FAILED  ] outputs_spec.lua @ 7: outputs fails (T)
    [ RUN      ] outputs_spec.lua @ 11: outputs errors
    outputs_spec.lua:12: broken
    [  ERROR   ] outputs_spec.lua @ 11: outputs errors (T)
    [ RUN      ] outputs_spec.lua @ 15: outputs is pending
    [ SKIPPED  ] outputs_spec.lua @ 15: outputs is pending (T)
    [ RUN      ] outputs_spec.lua @ 17: outputs is pending inside
    [ SKIPPED  ] outputs_spec.lua @ 17: outputs is pending inside (T)
    [ RUN      ] outputs_spec.lua @ 22: outputs nested passes too
    [       OK ] outputs_spec.lua @ 22: outputs nested passes too (T)
    outputs_spec.lua:27: in the body
    [----------] 6 tests from outputs_spec.lua (T)

    [----------] Global test environment teardown.
    [==========] 6 tests from 1 test file ran. (T)
    [  PASSED  ] 2 tests.
    [ SKIPPED  ] 2 tests, listed below:
    [ SKIPPED  ] outputs_spec.lua @ 15: outputs is pending
    [ SKIPPED  ] outputs_spec.lua @ 17: outputs is pending inside
    [  FAILED  ] 1 test, listed below:
    [  FAILED  ] outputs_spec.lua @ 7: outputs fails
    [  ERROR   ] 2 errors, listed below:
    [  ERROR   ] outputs_spec.lua @ 11: outputs errors
    [  ERROR   ] outputs_spec.lua @ 26: a describe that errors

     2 SKIPPED TESTS
     1 FAILED TEST
     2 ERRORS

    """

  @Test func gtestPrintsBustedsLayoutAndTaskrunsReportNothing() throws {
    let run = try taskrun(["-o", "gtest", "outputs_spec.lua"])
    #expect(run.status == 1, "a failure and errors: \(run.stderr)")
    #expect(Self.untimed(run.stdout) == Self.gtest, "\(run.stdout)")
    #expect(
      run.stdout.contains(try Regex(#"\[       OK \] outputs_spec.lua @ 3: outputs passes \([0-9]+\.[0-9]{2} ms\)"#)))
    #expect(run.stderr.isEmpty, "\(run.stderr)")
  }

  @Test(.enabled(if: bustedPath != nil, "busted is not installed (apt-get install lua-busted)"))
  func gtestIsBustedsByteForByteApartFromTimings() throws {
    for extra in [
      [], ["-v"], ["--suppress-pending"], ["--repeat", "2"], ["--filter", "nested"], ["-Xoutput", "--color"],
      ["-Xoutput", "--plain", "-v"], ["-Xoutput", "--plain,--color"], ["-Xoutput", "--color", "-Xoutput", "--plain"],
      ["--shuffle", "--seed", "7"], ["--shuffle-files", "--seed", "3"]
    ] {
      for specs in [["outputs_spec.lua"], ["printing_spec.lua"], ["hooks_spec.lua", "toplevel_spec.lua"]] {
        let theirs = try underBusted(["-o", "gtest"] + extra + specs)
        let ours = try taskrun(["-o", "gtest"] + extra + specs)
        let spec = specs.joined(separator: " ")
        #expect(
          Self.untimed(ours.stdout) == Self.untimed(theirs.stdout),
          "-o gtest \(extra.joined(separator: " ")) \(spec):\n--- busted\n\(theirs.stdout)--- taskrun\n\(ours.stdout)")
        #expect(ours.status == theirs.status, "\(extra) \(spec): \(ours.stderr)")
      }
    }
  }

  @Test func gtestTakesBustedsOptionsAndTheBustedFileCanNameIt() throws {
    let color = try taskrun(["-o", "gtest", "-Xoutput", "--color", "printing_spec.lua"])
    #expect(
      color.stdout.contains("\u{1B}[32m[ RUN      ]\u{1B}[0m \u{1B}[36mprinting_spec.lua\u{1B}[0m @ "),
      "--color forces busted's colours (NO_COLOR is set): \(color.stdout)")
    let plain = try taskrun(["-o", "gtest", "-Xoutput=--plain", "printing_spec.lua"])
    #expect(plain.status == 0 && !plain.stdout.contains("\u{1B}["), "\(plain.stdout)")
    // --plain wins over --color whatever the order, as busted's handler checks it first
    for options in [["-Xoutput", "--plain,--color"], ["-Xoutput", "--color", "-Xoutput", "--plain"]] {
      let both = try taskrun(["-o", "gtest"] + options + ["printing_spec.lua"], environment: ["FORCE_COLOR": "1"])
      #expect(
        both.status == 0 && both.stdout.contains("[ RUN      ]") && !both.stdout.contains("\u{1B}["), "\(both.stdout)")
    }
    let refused = try taskrun(["-o", "gtest", "-Xoutput", "--bogus", "printing_spec.lua"])
    #expect(refused.status == 2 && refused.stderr.contains("gtest output handler: unknown/bad flag: --bogus"))
    #expect(!refused.stdout.contains("RUN"), "nothing runs: \(refused.stdout)")
    // as Penlight's, luassert's and uuid's .busted files say: output = "gtest"
    let configured = try taskrun(["-f", "gtest.busted"])
    #expect(configured.status == 0, "\(configured.stdout)\(configured.stderr)")
    #expect(
      configured.stdout.hasPrefix(
        "[==========] Running tests from scanned files.\n[----------] Global test environment setup.\n"
          + "[----------] Running tests from printing_spec.lua\n[ RUN      ] printing_spec.lua @ 2: printing prints\n"
          + "printed by the test\n[       OK ] printing_spec.lua @ 2: printing prints ("),
      "what the test prints comes between its lines: \(configured.stdout)")
    #expect(configured.stdout.hasSuffix("\n[  PASSED  ] 1 test.\n"))
  }

  @Test func theTerminalOutputsTakeBustedsColorAndPlain() throws {
    let color = try taskrun(["-o", "utfTerminal", "-Xoutput", "--color", "printing_spec.lua"])
    #expect(color.status == 0 && color.stdout.contains("\u{1B}[32m"), "--color over NO_COLOR: \(color.stdout)")
    // --plain wins over --color whatever the order (busted's utfTerminal checks it first)
    for options in [["--plain"], ["--plain,--color"], ["--color", "-Xoutput", "--plain"]] {
      let plain = try taskrun(
        ["-o", "utfTerminal", "-Xoutput"] + options + ["printing_spec.lua"], environment: ["FORCE_COLOR": "1"])
      #expect(plain.status == 0 && plain.stdout.contains("●") && !plain.stdout.contains("\u{1B}["), "\(plain.stdout)")
    }
    let refused = try taskrun(["-o", "utfTerminal", "-Xoutput", "--nope", "printing_spec.lua"])
    #expect(refused.status == 2 && refused.stderr.contains("utfTerminal output handler: unknown/bad flag: --nope"))
    // busted's plainTerminal reads no options and prints no colour
    for options in [["--bogus"], ["--color"], ["x,--plain"]] {
      let plain = try taskrun(
        ["-o", "plainTerminal", "-Xoutput"] + options + ["printing_spec.lua"], environment: ["FORCE_COLOR": "1"])
      #expect(
        plain.status == 0 && plain.stdout.hasPrefix("printed by the test\n+\n") && !plain.stdout.contains("\u{1B}[")
          && plain.stderr.isEmpty, "\(options): \(plain.stdout)\(plain.stderr)")
    }
    let tap = try taskrun(["-o", "TAP", "-Xoutput", "--color", "printing_spec.lua"])
    #expect(tap.status == 0 && !tap.stdout.contains("\u{1B}["), "an option TAP does not read is ignored")
  }

  @Test(.enabled(if: bustedPath != nil, "busted is not installed (apt-get install lua-busted)"))
  func theTerminalOutputsTakeTheOptionsBustedsTake() throws {
    for (output, options, status) in [
      ("plainTerminal", ["-Xoutput", "--bogus"], 0), ("plainTerminal", ["-Xoutput", "--color"], 0),
      ("utfTerminal", ["-Xoutput", "--plain,--color"], 0), ("utfTerminal", ["-Xoutput", "--bogus"], 2)
    ] {
      let theirs = try underBusted(["-o", output] + options + ["printing_spec.lua"])
      let ours = try taskrun(["-o", output] + options + ["printing_spec.lua"])
      // busted exits 1 on a flag its handler refuses; taskrun counts it a usage error (2)
      #expect((theirs.status == 0) == (status == 0) && ours.status == status, "\(output) \(options): \(theirs.stderr)")
      #expect(!theirs.stdout.contains("\u{1B}[") && !ours.stdout.contains("\u{1B}["), "\(theirs.stdout)\(ours.stdout)")
    }
  }

  @Test func aTestPastTimeoutIsAnErrorTheHandlerIsToldOf() throws {
    // slow/runaway_spec.lua: one test loops, one sleeps, the third passes
    let run = Binary.finish(
      try Binary.start(
        ["test", "-o", "gtest", "--timeout", "0.5", "runaway_spec.lua"],
        in: TestModeTests.fixtures.appendingPathComponent("slow")), timeout: 30)
    #expect(run.status == 1, "\(run.stderr)")
    for (line, name) in [(3, "spins"), (4, "naps")] {
      #expect(
        run.stdout.contains(
          "runaway_spec.lua:\(line): timed out after 0.50 s\n[  ERROR   ] runaway_spec.lua @ \(line): runaway \(name) ("
        ),
        "stopped while it loops or while it waits: \(run.stdout)")
    }
    #expect(
      run.stdout.contains(try Regex(#"runaway spins \((5[0-9]{2}|[6-9][0-9]{2})\.[0-9]{2} ms\)"#)), "wall-clock time")
    #expect(
      run.stdout.hasSuffix(
        "[  PASSED  ] 1 test.\n[  ERROR   ] 2 errors, listed below:\n"
          + "[  ERROR   ] runaway_spec.lua @ 3: runaway spins\n[  ERROR   ] runaway_spec.lua @ 4: runaway naps\n\n 2 ERRORS\n"
      ))
  }

  @Test func aHandlerReportsWhileJUnitFilesAndEventsAreStillWritten() throws {
    let junit = Scratch.root.appendingPathComponent("handler-junit-\(UUID().uuidString).xml")
    let events = Scratch.root.appendingPathComponent("handler-events-\(UUID().uuidString).ndjson")
    defer {
      try? FileManager.default.removeItem(at: junit)
      try? FileManager.default.removeItem(at: events)
    }
    let run = try taskrun(["-o", "gtest", "--junit", junit.path, "--events", events.path, "outputs_spec.lua"])
    #expect(run.status == 1)
    let xml = (try? String(contentsOf: junit, encoding: .utf8)) ?? ""
    #expect(xml.contains(#"tests="7" failures="1" errors="2" skipped="2""#), "\(xml)")
    let lines = ((try? String(contentsOf: events, encoding: .utf8)) ?? "").split(separator: "\n")
    #expect(lines.count > 7 && lines.allSatisfy { $0.hasPrefix("{") }, "\(lines)")
    #expect(!run.stdout.contains("passed, "), "taskrun's closing line is the default report's: \(run.stdout)")
  }
}

// Handlers of the user's own: by path, by module, one written for busted, one that does not load.
extension BustedCompatOutputTests {
  @Test func aHandlerGivenByPathGetsItsOptionsNamesAndCounts() throws {
    let run = try taskrun(["-o", "./handler.lua", "-Xoutput", "a,b", "-Xoutput", "c", "outputs_spec.lua"])
    #expect(run.status == 1, "\(run.stderr)")
    #expect(
      run.stdout == """
        arguments: a|b|c
        base from: [busted]
        defaultOutput: plainTerminal verbose: false language: en
        success: outputs passes
          it outputs fails: outputs_spec.lua:8: Expected objects to be equal.
        failure: outputs fails
          it outputs errors: outputs_spec.lua:12: broken
        error: outputs errors
        pending: outputs is pending
        pending: outputs is pending inside
        success: outputs nested passes too
          describe a describe that errors: outputs_spec.lua:27: in the body
        counts: 2 successes, 1 failures, 2 errors, 2 pending
        successes: outputs passes, outputs nested passes too
        failures: outputs fails
        errors: outputs errors, a describe that errors
        pendings: outputs is pending, outputs is pending inside

        """, "\(run.stdout)")
    let verbose = try taskrun(["-o", Self.folder.appendingPathComponent("handler.lua").path, "-v", "printing_spec.lua"])
    #expect(
      verbose.stdout.hasPrefix(
        "arguments: \nbase from: [busted]\ndefaultOutput: plainTerminal verbose: true language: en\n"))
    #expect(verbose.stdout.contains("printed by the test\nsuccess: printing prints\n"), "\(verbose.stdout)")
    // busted's runner: defaultOutput is plainTerminal off a terminal (above), utfTerminal on one
    let (status, screen) = try LiveViewTests.onTerminal(
      ["test", "-o", "./handler.lua", "printing_spec.lua"], in: Self.folder)
    #expect(status == 0 && screen.contains("defaultOutput: utfTerminal verbose: false"), "\(screen)")
  }

  static let elements = """
    suite start suite:nil
    file start 1 file:elements_spec.lua
    describe start 2 describe:hooks in file:elements_spec.lua
    describe start 2 describe:inner in describe:hooks
    describe end 2 describe:inner in describe:hooks
      children: strict_teardown:nil@9, it:two@10
    describe end 2 describe:hooks in file:elements_spec.lua
      children: strict_setup:setup@3, before_each:nil@4, it:one@5, lazy_setup:nil@6, after_each:named@7, \
    describe:inner@8, strict_teardown:teardown@12, pending:later@13
    file end 1 file:elements_spec.lua

    """

  @Test func theEventsGiveBustedsElements() throws {
    // a file's start and end come with the file alone, a describe's with its block; a block's
    // children are its hooks too, in order; the suite has no name
    let run = try taskrun(["-o", "./elements.lua", "elements_spec.lua"])
    #expect(run.status == 0 && run.stdout == Self.elements, "\(run.stdout)\(run.stderr)")
    let lazy = try taskrun(["-o", "./elements.lua", "--lazy", "elements_spec.lua"])
    #expect(
      lazy.stdout.contains("children: lazy_setup:setup@3, ") && lazy.stdout.contains(", lazy_teardown:teardown@12, "),
      "--lazy makes setup and teardown busted's lazy ones: \(lazy.stdout)")
  }

  @Test(.enabled(if: bustedPath != nil, "busted is not installed (apt-get install lua-busted)"))
  func theEventsGiveWhatBustedsGive() throws {
    for extra in [[], ["--lazy"]] {
      let theirs = try underBusted(["-o", "./elements.lua"] + extra + ["elements_spec.lua"])
      let ours = try taskrun(["-o", "./elements.lua"] + extra + ["elements_spec.lua"])
      #expect(ours.stdout == theirs.stdout, "\(extra)\n--- busted\n\(theirs.stdout)--- taskrun\n\(ours.stdout)")
    }
  }

  @Test func aHandlerFoundAsAModuleOnTheSearchPath() throws {
    let run = try taskrun(["-o", "myhandler", "-m", "./lib/?.lua", "-Xoutput", "x,y", "outputs_spec.lua"])
    #expect(run.status == 1)
    #expect(
      run.stdout == "myhandler x,y: 2 passed, 1 failed, 2 errors, 2 pending; blocks: outputs, nested\n",
      "busted.parent gives a test's block: \(run.stdout)\(run.stderr)")
  }

  @Test(.enabled(if: bustedPath != nil, "busted is not installed (apt-get install lua-busted)"))
  func aHandlerWrittenForBustedGivesWhatItGivesUnderBusted() throws {
    // scripts/busted-json.lua, written for busted (scripts/compat gives it to busted)
    let handler = Binary.packageRoot.appendingPathComponent("scripts/busted-json.lua").path
    let specs = ["outputs_spec.lua", "hooks_spec.lua", "toplevel_spec.lua"]
    let theirs = try underBusted(["-o", handler] + specs)
    let ours = try taskrun(["-o", handler] + specs)
    var a = try JSONSerialization.jsonObject(with: Data(theirs.stdout.utf8)) as? [String: Any] ?? [:]
    var b = try JSONSerialization.jsonObject(with: Data(ours.stdout.utf8)) as? [String: Any] ?? [:]
    #expect(a["duration"] is Double && b["duration"] is Double)
    a["duration"] = nil
    b["duration"] = nil
    #expect(NSDictionary(dictionary: a).isEqual(to: b), "busted:\n\(theirs.stdout)\ntaskrun:\n\(ours.stdout)")
    #expect((b["errors"] as? [Any])?.count == 6, "a test's, a describe's, three hooks', a file's")
    // Tests/TestMode/broken: a spec that does not load (an error before the suite starts), one
    // whose top level raises, one that is fine
    let broken = TestModeTests.fixtures.appendingPathComponent("broken")
    let theirsBroken = Binary.finish(
      try Binary.start(["-o", handler, "."], in: broken, program: Self.bustedPath ?? "busted"))
    let oursBroken = Binary.finish(try Binary.start(["test", "-o", handler, "."], in: broken))
    a = try JSONSerialization.jsonObject(with: Data(theirsBroken.stdout.utf8)) as? [String: Any] ?? [:]
    b = try JSONSerialization.jsonObject(with: Data(oursBroken.stdout.utf8)) as? [String: Any] ?? [:]
    a["duration"] = nil
    b["duration"] = nil
    #expect(
      !a.isEmpty && NSDictionary(dictionary: a).isEqual(to: b),
      "busted:\n\(theirsBroken.stdout)\ntaskrun:\n\(oursBroken.stdout)")
  }

  @Test func aHandlerThatDoesNotLoadIsAnErrorAndTheDefaultReportTakesOver() throws {
    let broken = try taskrun(["-o", "./broken_handler.lua", "printing_spec.lua"])
    #expect(
      broken.stderr.hasPrefix(
        "taskrun: error: Cannot load output library: ./broken_handler.lua\nbroken_handler.lua:2: this handler is broken\n"
      ), "\(broken.stderr)")
    #expect(
      broken.stdout.hasPrefix("printed by the test\n+\n\n1 test from 1 file in ")
        && broken.stdout.hasSuffix("\n1 passed, 0 failed\n"),
      "taskrun's report for busted's defaultOutput, plainTerminal off a terminal: \(broken.stdout)")
    #expect(broken.status == 1, "busted counts it as an error")
    let missing = try taskrun(["-o", "no.such.handler", "printing_spec.lua"])
    #expect(missing.stderr.hasPrefix("taskrun: error: Cannot load output library: no.such.handler\n"))
    #expect(missing.stderr.contains("module 'no.such.handler' not found:"), "\(missing.stderr)")
    #expect(missing.status == 1 && missing.stdout.hasSuffix("\n1 passed, 0 failed\n"))
  }

  /// What -o sound says: busted's phrases (its language file, when lua-busted is installed),
  /// else taskrun's.
  static let successPhrases = [
    "All tests passed", "Every test passed", "The specs pass", "Aww yeah, passing specs", "Doesn't matter, had specs",
    "Feels good, man", "Great success", "Tests pass, drink another beer"
  ]
  static let failurePhrases = [
    "Some tests failed", "A test failed", "The specs fail", "You have %d busted specs", "Your specs are busted",
    "Your code is bad and you should feel bad", "Your code is in the Danger Zone",
    "Strange game. The only way to win is not to test", "My grandmother wrote better specs on a 3 86",
    "Every time there's a failure, drink another beer", "Feels bad man"
  ]

  /// Whether the fake espeak was given one of `phrases` and ran to its end.
  static func said(_ log: String, among phrases: [String]) -> Bool {
    phrases.contains { log == "-s 160 \($0)\nended\n" }
  }

  @Test func soundSaysTheOutcomeOrSaysWhyItCannot() throws {
    let espeak = (ProcessInfo.processInfo.environment["PATH"] ?? "").split(separator: ":")
      .contains { FileManager.default.isExecutableFile(atPath: "\($0)/espeak") }
    let sound = try taskrun(["-o", "sound", "printing_spec.lua"])
    #expect(sound.status == 0 && sound.stdout == "printed by the test\n", "no report: \(sound.stdout)")
    let enabled = try taskrun(["--enable-sound", "printing_spec.lua"])
    #expect(enabled.status == 0 && enabled.stdout.hasSuffix("\n1 passed, 0 failed\n"), "the report as well")
    let short = try taskrun(["-s", "-o", "gtest", "outputs_spec.lua"])
    #expect(short.status == 1 && Self.untimed(short.stdout) == Self.gtest)
    for (run, word) in [(sound, "-o sound"), (enabled, "sound"), (short, "sound")] {
      #expect(
        espeak
          || run.stderr == "taskrun: \(word): espeak is not installed, so nothing is said "
            + "(Debian: apt-get install espeak)\n",
        "\(run.stderr)")
    }
    // With an espeak (a fake one here) the outcome is said, and taskrun waits for it to end.
    let bin = Scratch.root.appendingPathComponent("espeak-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: bin, withIntermediateDirectories: true)
    let said = bin.appendingPathComponent("said")
    try Scratch.writeProgram(
      "#!/bin/sh\necho \"$@\" > '\(said.path)'\nsleep 0.3\necho ended >> '\(said.path)'\n",
      to: bin.appendingPathComponent("espeak"))
    let path = bin.path + ":" + (ProcessInfo.processInfo.environment["PATH"] ?? "")
    let passed = try taskrun(["-s", "printing_spec.lua"], environment: ["PATH": path])
    let words = try String(contentsOf: said, encoding: .utf8)
    #expect(passed.stderr.isEmpty && Self.said(words, among: Self.successPhrases), "\(words)\(passed.stderr)")
    let failed = try taskrun(["-o", "sound", "outputs_spec.lua"], environment: ["PATH": path])
    let failure = try String(contentsOf: said, encoding: .utf8)
    #expect(failed.status == 1 && Self.said(failure, among: Self.failurePhrases), "\(failure)")
  }
}

// What the second fresh-eyes round found: the value a test raised, busted's own terminal
// handlers, --lazy hooks' descriptors, a handler that is not found.
extension BustedCompatOutputTests {
  /// trace.message of each failure and error of a -o json report, by test name, as JSON text.
  static func raised(_ json: String) throws -> [String: String] {
    let object = try #require(try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any])
    var result: [String: String] = [:]
    for key in ["failures", "errors"] {
      for item in object[key] as? [[String: Any]] ?? [] {
        let name = ((item["element"] as? [String: Any])?["name"] as? String) ?? "?"
        let message = (item["trace"] as? [String: Any])?["message"] ?? NSNull()
        let text = try JSONSerialization.data(withJSONObject: [message], options: [.sortedKeys])
        result[name] = String(decoding: text, as: UTF8.self)
      }
    }
    return result
  }

  @Test func aHandlerIsToldWhatWasRaisedAsItWasRaised() throws {
    let run = try taskrun(["-o", "json", "raised_spec.lua"])
    let raised = try Self.raised(run.stdout)
    #expect(raised["a table"] == #"[{"code":1}]"#, "\(raised)")
    #expect(raised["a number"] == "[42]" && raised["at level 0"] == #"["plain"]"#, "\(raised)")
    #expect(raised["an assertion"]?.hasPrefix(#"[{"message":"raised_spec.lua:6: Expected"#) == true, "\(raised)")
    if Self.bustedPath != nil {
      #expect(try Self.raised(underBusted(["-o", "json", "raised_spec.lua"]).stdout) == raised)
    }
  }

  @Test func lazyHooksAndMissingHandlersAreSaidAsBustedSaysThem() throws {
    let strict = try taskrun(["-o", "./descriptors.lua", "lazy_spec.lua"])
    let lazy = try taskrun(["-o", "./descriptors.lua", "--lazy", "lazy_spec.lua"])
    #expect(strict.stdout.contains("ERROR strict_setup") && lazy.stdout.contains("ERROR lazy_setup"), "\(lazy.stdout)")
    if Self.bustedPath != nil {
      let theirs = try underBusted(["-o", "./descriptors.lua", "--lazy", "lazy_spec.lua"])
      #expect(theirs.stdout.contains("ERROR lazy_setup"), "\(theirs.stdout)")
    }
    let missing = try taskrun(["-o", "no_such_handler", "lazy_spec.lua"])
    #expect(
      missing.stderr.contains("Cannot load output library: no_such_handler\nmodule 'no_such_handler' not found"),
      "no position of taskrun's runtime: \(missing.stderr)")
  }

  /// busted's own terminal handler, given by its module name, prints its summary: busted's
  /// words come from its language files, which a handler's base loads as busted's does.
  @Test(.enabled(if: bustedPath != nil, "busted is not installed (apt-get install lua-busted)"))
  func bustedsOwnTerminalHandlerPrintsItsSummary() throws {
    let run = try taskrun(["-o", "busted.outputHandlers.plainTerminal", "raised_spec.lua"])
    #expect(run.stdout.contains("0 successes / 1 failure / 3 errors / 0 pending"), "\(run.stdout)\(run.stderr)")
  }
}

// The outputs taskrun writes itself, against busted's, test by test: the same tests with the
// same outcomes and messages (their layouts are taskrun's own; see docs/test-mode.md).
extension BustedCompatOutputTests {
  /// (status, name, first line of the message) of each TAP result; a skip's name is busted's:
  /// the pending message if there is one, else the name.
  static func tap(_ text: String, busted: Bool) -> [String] {
    var results: [String] = []
    let lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
    for (i, line) in lines.enumerated() {
      guard let match = line.firstMatch(of: #/^(not )?ok \d+ - (.*)$/#) else { continue }
      let text = String(match.2)
      if match.1 != nil {
        let message =
          busted
          ? lines[(i + 1)...].first { $0.hasPrefix("# Failure message: ") }.map { String($0.dropFirst(19)) }
          : lines.indices.contains(i + 3) ? lines[i + 3].trimmingCharacters(in: .whitespaces) : nil
        results.append("fail|\(text)|\(message ?? "")")
      } else if busted, text.hasPrefix("# SKIP ") {
        results.append("skip|\(text.dropFirst(7))")
      } else if !busted, let skip = text.firstMatch(of: #/^(.*) # SKIP (.*)$/#) {
        results.append("skip|\(skip.2 == "pending" ? skip.1 : skip.2)")
      } else {
        results.append("ok|\(text)")
      }
    }
    return results
  }

  @Test(.enabled(if: bustedPath != nil, "busted is not installed (apt-get install lua-busted)"))
  func tapSaysWhatBustedsSaysTestByTest() throws {
    let theirs = try underBusted(["-o", "TAP", "outputs_spec.lua"])
    let ours = try taskrun(["-o", "TAP", "outputs_spec.lua"])
    let expected = Self.tap(theirs.stdout, busted: true)
    #expect(expected.count == 7 && expected.filter { $0.hasPrefix("fail|") }.count == 3, "\(theirs.stdout)")
    #expect(Self.tap(ours.stdout, busted: false) == expected, "busted:\n\(theirs.stdout)\ntaskrun:\n\(ours.stdout)")
    #expect(theirs.stdout.hasSuffix("\n1..7\n") && ours.stdout.contains("\n1..7\n"))
    #expect(ours.status == theirs.status)
  }

  /// (name, status, first line of the message) of each JUnit testcase, then each error outside
  /// a testcase (busted's describe errors) with an empty name.
  static func junit(_ xml: String) -> [String] {
    func unescaped(_ s: Substring) -> String {
      s.replacingOccurrences(of: "&lt;", with: "<").replacingOccurrences(of: "&gt;", with: ">")
        .replacingOccurrences(of: "&apos;", with: "'").replacingOccurrences(of: "&quot;", with: "\"")
        .replacingOccurrences(of: "&amp;", with: "&")
    }
    var rest = xml
    var results: [String] = []
    let testcase = #/<testcase\b(?<attributes>[^>]*?)(?:/>|>(?<body>.*?)</testcase>)/#.dotMatchesNewlines()
    for match in xml.matches(of: testcase) {
      let name = match.attributes.firstMatch(of: #/\sname=["']([^"']*)["']/#).map { unescaped($0.1) } ?? "?"
      var status = "success"
      var message = ""
      if let body = match.body,
        let child = body.firstMatch(of: #/<(failure|error|skipped)\b([^>]*?)(?:/>|>([^\n<]*))/#)
      {
        status = String(child.1)
        message = child.3.map(unescaped) ?? ""
        if message.isEmpty, let given = child.2.firstMatch(of: #/message="([^"]*)"/#) { message = unescaped(given.1) }
      }
      results.append("\(name)|\(status)|\(message)")
      rest = rest.replacingOccurrences(of: String(match.0), with: "")
    }
    for match in rest.matches(of: #/<error\b[^>]*>([^\n<]*)/#) { results.append("|error|\(unescaped(match.1))") }
    return results
  }

  @Test(.enabled(if: bustedPath != nil, "busted is not installed (apt-get install lua-busted)"))
  func junitSaysWhatBustedsSaysTestByTest() throws {
    let theirs = try underBusted(["-o", "junit", "outputs_spec.lua"])
    let ours = try taskrun(["-o", "junit", "outputs_spec.lua"])
    let expected = Self.junit(theirs.stdout)
    #expect(expected.count == 7, "\(theirs.stdout)")
    // taskrun gives the describe error a testcase of its own, named as busted names it elsewhere
    var got = Self.junit(ours.stdout)
    got = got.map {
      $0.hasPrefix("a describe that errors|") ? String($0.dropFirst("a describe that errors".count)) : $0
    }
    #expect(got.sorted() == expected.sorted(), "busted:\n\(theirs.stdout)\ntaskrun:\n\(ours.stdout)")
    for (attribute, value) in [("failures", 1), ("errors", 2)] {
      #expect(theirs.stdout.contains("\(attribute)='\(value)'") && ours.stdout.contains("\(attribute)=\"\(value)\""))
    }
  }

  @Test(.enabled(if: bustedPath != nil, "busted is not installed (apt-get install lua-busted)"))
  func jsonSaysWhatBustedsSaysTestByTest() throws {
    // busted's own -o json prints nothing on this spec (its encoder meets functions in the
    // elements of pending tests): scripts/busted-json.lua writes the same object robustly.
    let handler = Binary.packageRoot.appendingPathComponent("scripts/busted-json.lua").path
    let theirs = try underBusted(["-o", handler, "outputs_spec.lua"])
    let ours = try taskrun(["-o", "json", "outputs_spec.lua"])
    func entries(_ text: String) throws -> [String: [String]] {
      let object = try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any] ?? [:]
      var lists: [String: [String]] = [:]
      for key in ["successes", "failures", "errors", "pendings"] {
        lists[key] = (object[key] as? [[String: Any]] ?? []).map { entry in
          let element = entry["element"] as? [String: Any] ?? [:]
          let trace = element["trace"] as? [String: Any] ?? [:]
          return [
            entry["name"] as? String ?? "-", entry["message"] as? String ?? "-",
            element["descriptor"] as? String ?? "-", trace["short_src"] as? String ?? "-",
            "\(trace["currentline"] ?? "-")"
          ].joined(separator: "|")
        }
      }
      return lists
    }
    let expected = try entries(theirs.stdout)
    #expect(expected["errors"]?.count == 2 && expected["pendings"]?.count == 2, "\(theirs.stdout)")
    let got = try entries(ours.stdout)
    #expect(got == expected, "busted:\n\(theirs.stdout)\ntaskrun:\n\(ours.stdout)")
  }

  /// The entries of a -o json object by list: (key, entry) pairs.
  static func jsonEntries(_ text: String) throws -> [(String, [String: Any])] {
    let line = text.split(separator: "\n").last { $0.hasPrefix("{") }.map(String.init) ?? ""
    let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any] ?? [:]
    return ["successes", "failures", "errors", "pendings"].flatMap { key in
      (object[key] as? [[String: Any]] ?? []).map { (key, $0) }
    }
  }

  @Test func jsonIsBustedsObject() throws {
    let run = try taskrun(["-o", "json", "outputs_spec.lua", "json_spec.lua"])
    #expect(run.status == 1)
    #expect(run.stderr == "printed by the test\n", "what tests print goes to stderr: \(run.stderr)")
    let entries = try Self.jsonEntries(run.stdout)
    #expect(entries.count == 9, "\(run.stdout)")
    for (key, entry) in entries {
      let element = entry["element"] as? [String: Any] ?? [:]
      let name = entry["name"] as? String ?? ""
      // busted's format: name is the full name, element.name the element's own
      #expect(
        name.hasSuffix(" " + (element["name"] as? String ?? "?")) || name == element["name"] as? String, "\(entry)")
      #expect(element["attributes"] is [Any] && element["starttick"] is Double && element["starttime"] is NSNumber)
      #expect(
        (element["endtick"] != nil) == (key == "successes" || key == "pendings"),
        "a failure's element is copied when it fails, before its end: \(entry)")
      #expect(
        element["file"] == nil && element["kind"] == nil && element["line"] == nil, "taskrun's own fields: \(element)")
      if key == "failures" || key == "errors" {
        let trace = entry["trace"] as? [String: Any] ?? [:]
        #expect((trace["traceback"] as? String)?.hasPrefix("\nstack traceback:\n") == true, "\(entry)")
        // trace.message is what was raised: a failure's object (its message), an error's string
        let raised = trace["message"] as? String ?? (trace["message"] as? [String: Any])?["message"] as? String
        #expect(entry["message"] is String && raised == entry["message"] as? String, "\(entry)")
        #expect(
          (entry["isError"] as? Bool ?? false) == (key == "errors"), "absent for a failure, as in busted: \(entry)")
      }
    }
    let nested = entries.first { $0.1["name"] as? String == "json nested fails" }?.1
    #expect((nested?["element"] as? [String: Any])?["name"] as? String == "fails", "\(run.stdout)")
    #expect(nested?["randomseed"] == nil)
    // a shuffled block keeps its seed, which its failures carry (gtest prints "Random seed: 7")
    let shuffled = try taskrun(["-o", "json", "--shuffle", "--seed", "7", "json_spec.lua", "outputs_spec.lua"])
    for (key, entry) in try Self.jsonEntries(shuffled.stdout) where key == "failures" || key == "errors" {
      #expect(entry["randomseed"] as? Int == 7, "\(entry)")
    }
  }

  @Test(.enabled(if: bustedPath != nil, "busted is not installed (apt-get install lua-busted)"))
  func jsonHasTheFieldsOfBustedsOwn() throws {
    let theirs = try underBusted(["-o", "json", "json_spec.lua"])
    let ours = try taskrun(["-o", "json", "json_spec.lua"])
    #expect(theirs.stdout.hasPrefix("printed by the test\n"), "busted prints before its JSON: \(theirs.stdout)")
    #expect(ours.stdout.hasPrefix("{") && ours.stderr == "printed by the test\n", "taskrun's JSON stays JSON")
    let a = try Self.jsonEntries(theirs.stdout)
    let b = try Self.jsonEntries(ours.stdout)
    #expect(a.count == 2 && b.count == 2, "\(theirs.stdout)\n\(ours.stdout)")
    for ((key, x), (ourKey, y)) in zip(a, b) {
      #expect(key == ourKey && Set(x.keys) == Set(y.keys), "\(x.keys) \(y.keys)")
      let (ex, ey) = (x["element"] as? [String: Any] ?? [:], y["element"] as? [String: Any] ?? [:])
      #expect(Set(ex.keys) == Set(ey.keys), "busted's element fields: \(ex.keys) \(ey.keys)")
      for field in ["name", "descriptor"] { #expect(ex[field] as? String == ey[field] as? String) }
      #expect(x["name"] as? String == y["name"] as? String && x["message"] as? String == y["message"] as? String)
      // taskrun's traces have busted's places and tracebacks, not debug.getinfo's other fields
      let (tx, ty) = (x["trace"] as? [String: Any] ?? [:], y["trace"] as? [String: Any] ?? [:])
      #expect(Set(ty.keys).isSubset(of: Set(tx.keys)) && tx["currentline"] as? Int == ty["currentline"] as? Int)
      #expect(tx["traceback"] as? String == ty["traceback"] as? String || key == "successes", "\(tx) \(ty)")
    }
  }
}
