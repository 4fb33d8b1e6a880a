// busted's command line in `taskrun test`, option by option, on the fixture project in
// Tests/TestMode/options (its .busted excludes spec/fixtures and has an `alt` task).
import Foundation
import TestSupport
import Testing

@Suite struct BustedOptionsTests {
  static let project = TestModeTests.fixtures.appendingPathComponent("options")

  func test(_ arguments: [String], environment: [String: String] = [:]) throws -> Run {
    Binary.finish(try Binary.start(["test"] + arguments, in: Self.project, environment: environment))
  }

  /// The lines TAP prints for what tests printed ("# text").
  func printed(_ run: Run) -> [String] {
    run.stdout.split(separator: "\n").filter { $0.hasPrefix("# ") }.map { String($0.dropFirst(2)) }
  }

  @Test func excludePatternKeepsFixturesOut() throws {
    let run = try test([])
    #expect(
      run.status == 0 && run.stdout.hasSuffix("\n3 passed, 0 failed\n"), "the .busted exclude-pattern: \(run.stdout)")
    let given = try test(["--exclude-pattern=^nothing"])
    #expect(given.status == 1, "the command line's --exclude-pattern replaces the .busted one: \(given.stdout)")
    #expect(given.stdout.contains("fixtures must not run"))
  }

  @Test func runPicksATaskAndPatternPicksFiles() throws {
    let alt = try test(["-r", "alt", "-o", "TAP"])
    #expect(
      alt.status == 0 && alt.stdout.contains("ok 1 - is found by the alt task's pattern\n1..1\n"), "\(alt.stdout)")
    let pattern = try test(["alt", "-p", "other"])
    #expect(
      pattern.status == 1 && pattern.stdout.hasSuffix("\n0 passed, 1 failed\n"),
      "-p chooses other.lua: \(pattern.stdout)")
    let missing = try test(["-r", "nosuch"])
    #expect(missing.status == 2 && missing.stderr.contains("Task `nosuch` not found"), "\(missing.stderr)")
  }

  @Test func helperRunsFirstWithItsOwnArguments() throws {
    let run = try test(["--helper", "helper.lua", "-Xhelper", "one,two", "--filter", "helper"])
    #expect(run.status == 0 && run.stdout.hasSuffix("\n1 passed, 0 failed\n"), "\(run.stdout)\(run.stderr)")
    let broken = try test(["--helper", "no-such-helper.lua"])
    #expect(broken.status == 2 && broken.stderr.contains("failed running the specified helper (no-such-helper.lua)"))
    let module = try test(["--helper", "no.such.module"])
    #expect(
      module.stderr.contains(
        "failed running the specified helper (no.such.module), error: module 'no.such.module' not found"),
      "no position of taskrun's own runtime: \(module.stderr)")
  }

  @Test func aHelperMaySubscribeToBustedsEventsAndAddSuiteHooks() throws {
    // snapshot_helper.lua reverts luassert's state at every test's end and counts tests in
    // a suite-wide before_each; without the helper the stub leaks into the next test.
    let run = try test(["--helper", "snapshot_helper.lua", "other/helper_events_spec.lua"])
    #expect(run.status == 0 && run.stdout.hasSuffix("\n3 passed, 0 failed\n"), "\(run.stdout)\(run.stderr)")
    let without = try test(["other/helper_events_spec.lua"])
    #expect(without.stdout.hasSuffix("\n1 passed, 2 failed\n"), "\(without.stdout)")
  }

  @Test func lpathAndCpathGoInFrontOfTheSearchPaths() throws {
    let run = try test(["--lpath", "./lib/?.lua", "--filter", "lpath"], environment: ["EXPECT_LPATH": "1"])
    #expect(run.status == 0, "\(run.stdout)\(run.stderr)")
    let paths = try test([
      "-o", "TAP", "--cpath", "./native/?.so", "-e", "print(package.cpath:sub(1, 14), package.path:sub(1, 12))",
      "--filter", "passes"
    ])
    #expect(run.status == 0)
    #expect(
      paths.stdout.contains("./native/?.so;\t./src/?.lua;"), "-e runs first; busted's default lpath: \(paths.stdout)")
  }

  @Test func argIsSetAsLuaAndBustedSetIt() throws {
    let run = try test(["other/args_spec.lua", "-o", "TAP"])
    let lines = printed(run)
    #expect(run.status == 0, "\(run.stdout)\(run.stderr)")
    #expect(lines.contains { $0.hasPrefix("arg[0]=/") && $0.hasSuffix("/taskrun") }, "\(lines)")
    #expect(lines.contains("interpreter exit=7"), "arg[-1] is a Lua interpreter: \(lines)")
    #expect(
      Array(lines.filter { $0.hasPrefix("arg[") && !$0.hasPrefix("arg[0") && !$0.hasPrefix("arg[-") })
        == ["arg[1]=other/args_spec.lua", "arg[2]=-o", "arg[3]=TAP"], "the options: \(lines)")
  }

  @Test func filesAreInsulatedUnlessToldNot() throws {
    let files = ["other/global_a_spec.lua", "other/global_b_spec.lua", "-o", "TAP"]
    #expect(printed(try test(files)).contains("SHARED_GLOBAL=nil loaded=nil"))
    #expect(printed(try test(files + ["--no-auto-insulate"])).contains("SHARED_GLOBAL=from a loaded=true"))
  }

  @Test func tagsMatchAsBustedMatchesThem() throws {
    // busted finds "#" .. tag as a Lua pattern in the full name: "sl" selects "#slow".
    let tagged = try test(["other/tags_spec.lua", "--tags=sl", "--exclude-tags=skipme", "-o", "TAP"])
    #expect(tagged.stdout.contains("ok 1 - tagged is \\#slow\n1..1\n"), "\(tagged.stdout)")
    // --exclude-tags on a describe: its body never runs (so its error never happens).
    let excluded = try test(["other/tags_spec.lua", "--exclude-tags=skipme,fast"])
    #expect(excluded.status == 0 && excluded.stdout.hasSuffix("\n2 passed, 0 failed\n"), "\(excluded.stdout)")
    let both = try test(["other/tags_spec.lua", "-t", "slow", "--exclude-tags", "slow"])
    #expect(both.status == 2 && both.stderr.contains("cannot use --tags and --exclude-tags for the same tag"))
  }

  @Test func listPrintsEveryTestAndRunsNone() throws {
    let run = try test(["--list", "other/list_spec.lua"])
    #expect(run.status == 0)
    #expect(
      run.stdout == "other/list_spec.lua:2: listed first\nother/list_spec.lua:4: listed inner second\n", "\(run.stdout)"
    )
  }

  @Test func aFileNamedTwiceRunsOnceAndRepeatRunsAllAgain() throws {
    let twice = try test(["spec/a_spec.lua", "./spec/a_spec.lua", "spec/../spec/a_spec.lua"])
    #expect(twice.stdout.hasSuffix("\n3 passed, 0 failed\n"), "\(twice.stdout)")
    let repeated = try test(["--repeat", "3", "spec/a_spec.lua"])
    #expect(repeated.stdout.hasSuffix("\n9 passed, 0 failed\n"), "\(repeated.stdout)")
    let zero = try test(["--repeat", "0"])
    #expect(zero.status == 2 && zero.stderr.contains("--repeat must be from 1"))
  }

  @Test func directoryChangesFolderFirst() throws {
    let run = Binary.finish(
      try Binary.start(
        ["test", "-C", TestModeTests.fixtures.path, "-C", "options"],
        in: Scratch.root))
    #expect(
      run.status == 0 && run.stdout.hasSuffix("\n3 passed, 0 failed\n"),
      "-C applies the folder's .busted: \(run.stdout)\(run.stderr)")
  }

  @Test func coverageStartsLuaCovOrSaysItIsMissing() throws {
    let missing = try test(["--coverage", "spec/a_spec.lua"])
    #expect(missing.status == 2 && missing.stderr.contains("LuaCov is not installed"), "\(missing.stderr)")
    let run = try test(
      ["--coverage", "other/coverage_spec.lua", "-o", "TAP"], environment: ["LUA_PATH_5_4": "./fakecov/?.lua;;"])
    #expect(printed(run).contains("LUACOV_STARTED=defaults"), "\(run.stdout)\(run.stderr)")
  }

  @Test func withoutLuassertItSaysHowToInstallIt() throws {
    let run = try test(["spec/a_spec.lua"], environment: ["LUA_PATH_5_4": "/nonexistent/?.lua"])
    #expect(run.status == 2)
    #expect(
      run.stderr.contains("taskrun test needs luassert and say")
        && run.stderr.contains("apt-get install lua-luassert lua-say"),
      "\(run.stderr)")
  }

  @Test(arguments: [
    (["--bogus"], "taskrun: unknown option '--bogus'"),
    (["-o", "gtest", "-Xoutput", "--bogus"], "gtest output handler: unknown/bad flag: --bogus"),
    (["--tap", "-o", "json"], "--tap and -o cannot be used together"),
    (["-f", "no-such.busted"], "specified config file 'no-such.busted' not found")
  ])
  func usageErrorsExitTwo(_ arguments: [String], _ message: String) throws {
    let run = try test(arguments)
    #expect(run.status == 2)
    #expect(run.stderr.contains(message), "\(run.stderr)")
  }
}
