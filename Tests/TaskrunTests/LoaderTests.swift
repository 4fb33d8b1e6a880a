// busted's test file loaders in `taskrun test` (--loaders, the .busted key `loaders`), on the
// fixture project in Tests/TestMode/moon: a .moon spec, a .lua spec beside it, a .busted file
// with a `moon_only` task (a comma string) and a `both` task (a list), and nomoon/, which
// hides MoonScript (LUA_PATH_5_4=nomoon/?.lua;; finds a moonscript.lua that fails to load).
import Foundation
import TestSupport
import Testing

@Suite struct LoaderTests {
  static let project = TestModeTests.fixtures.appendingPathComponent("moon")
  static let withoutMoonscript = ["LUA_PATH_5_4": project.appendingPathComponent("nomoon").path + "/?.lua;;"]

  /// Whether Lua 5.4 can require moonscript (Debian 12 has no package; LuaRocks has it).
  static let moonscriptInstalled: Bool = {
    let lua = Process()
    lua.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    lua.arguments = ["lua5.4", "-e", "require 'moonscript'"]
    lua.standardOutput = FileHandle.nullDevice
    lua.standardError = FileHandle.nullDevice
    guard (try? lua.run()) != nil else { return false }
    lua.waitUntilExit()
    return lua.terminationStatus == 0
  }()
  static let noMoonscript =
    "moonscript is not installed for Lua 5.4 (Debian 12 has no package: luarocks --lua-version 5.4 install moonscript)"

  func test(_ arguments: [String], environment: [String: String] = [:]) throws -> Run {
    Binary.finish(try Binary.start(["test"] + arguments, in: Self.project, environment: environment))
  }

  /// The names of the tests TAP reports, with "ok"/"not ok".
  func reported(_ run: Run) -> [String] {
    run.stdout.split(separator: "\n").filter { $0.hasPrefix("ok ") || $0.hasPrefix("not ok ") }.map {
      let words = $0.split(separator: " - ", maxSplits: 1)
      return ($0.hasPrefix("ok") ? "ok " : "not ok ") + (words.last.map(String.init) ?? "")
    }
  }

  @Test(
    .enabled(if: BustedCompatTests.busted != nil, "busted is not installed (apt-get install lua-busted)"),
    .enabled(if: moonscriptInstalled, "\(noMoonscript)"))
  func moonSpecsMatchBustedTestForTestMessagesIncluded() throws {
    let suites = [
      "\(Self.project.path)", "\(Self.project.path)::broken", "\(Self.project.path)::--loaders=lua",
      "\(Self.project.path)::-r moon_only", "\(Self.project.path)::-r both",
      "\(Self.project.path)::--loaders=moonscript --loaders=lua spec"
    ]
    try expectSameAsBusted(suites)
  }

  @Test(.enabled(if: BustedCompatTests.busted != nil, "busted is not installed (apt-get install lua-busted)"))
  func withoutMoonscriptTheSameAsBusted() throws {
    let suites = [
      "\(Self.project.path)", "\(Self.project.path)::broken", "\(Self.project.path)::-r moon_only",
      "\(Self.project.path)::spec/outcomes_spec.moon"
    ]
    try expectSameAsBusted(suites, environment: Self.withoutMoonscript)
  }

  func expectSameAsBusted(_ suites: [String], environment: [String: String] = [:]) throws {
    let root = Binary.packageRoot
    let compat = Binary.finish(
      try Binary.start(
        ["--messages", "--taskrun", Binary.url.path] + suites, in: root, environment: environment,
        program: root.appendingPathComponent("scripts/compat").path), timeout: 120)
    #expect(compat.status == 0, "\(compat.stdout)\(compat.stderr)")
    #expect(compat.stdout.hasSuffix("\n\(suites.count) of \(suites.count) suites the same\n"), "\(compat.stdout)")
  }

  @Test(.enabled(if: moonscriptInstalled, "\(noMoonscript)"))
  func moonMessagesNameTheMoonLines() throws {
    let run = try test(["-o", "json", "spec/outcomes_spec.moon"])
    let object = try JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [String: Any]
    func messages(_ key: String) -> [String] {
      ((object?[key] as? [[String: Any]]) ?? []).compactMap { $0["message"] as? String }
    }
    // the compiled Lua's lines are 8, 12 and 15: busted names the .moon file's
    #expect(
      messages("failures").map { $0.prefix(43) } == ["spec/outcomes_spec.moon:9: Expected objects"], "\(run.stdout)")
    #expect(
      messages("errors") == [
        "spec/outcomes_spec.moon:13: broken here", "spec/outcomes_spec.moon:16: {\n  code = 1\n}",
        "spec/outcomes_spec.moon:22: before_each broke"
      ], "\(run.stdout)")
    #expect((object?["successes"] as? [Any])?.count == 2 && (object?["pendings"] as? [Any])?.count == 1)
    let tap = try test(["-o", "TAP", "spec/outcomes_spec.moon"])
    #expect(tap.stdout.contains("  at:\n    file: spec/outcomes_spec.moon\n    line: 7\n"), "\(tap.stdout)")
    #expect(tap.status == 1)
  }

  @Test(.enabled(if: moonscriptInstalled, "\(noMoonscript)"))
  func defaultLoadersTakeLuaAndMoon() throws {
    let run = try test(["-o", "TAP"])
    #expect(reported(run).contains("ok a moon spec passes") && reported(run).contains("ok a lua spec passes"))
    #expect(run.stdout.hasSuffix("# 3 passed, 4 failed, 1 skipped\n"), "\(run.stdout)")
    let moon = try test(["-o", "TAP", "-r", "moon_only"])
    #expect(!reported(moon).contains("ok a lua spec passes") && reported(moon).contains("ok a moon spec passes"))
  }

  @Test func loadersLuaLeavesMoonFilesOut() throws {
    let run = try test(["-o", "TAP", "--loaders=lua"])
    #expect(reported(run) == ["ok a lua spec passes"], "\(run.stdout)\(run.stderr)")
    #expect(run.status == 0)
  }

  @Test func loadersFromTheBustedFileAStringOrAList() throws {
    // without moonscript, `moonscript` takes nothing: moon_only runs no test, both the .lua one
    let moon = try test(["-o", "TAP", "-r", "moon_only"], environment: Self.withoutMoonscript)
    #expect(moon.status == 0 && reported(moon).isEmpty, "\(moon.stdout)\(moon.stderr)")
    let both = try test(["-o", "TAP", "-r", "both"], environment: Self.withoutMoonscript)
    #expect(reported(both) == ["ok a lua spec passes"], "\(both.stdout)\(both.stderr)")
    let given = try test(["-o", "TAP", "-r", "moon_only", "--loaders", "lua"], environment: Self.withoutMoonscript)
    #expect(reported(given) == ["ok a lua spec passes"], "the command line wins: \(given.stdout)\(given.stderr)")
  }

  @Test func withoutMoonscriptMoonFilesAreFoundButNotRun() throws {
    // busted says nothing of them: no error, and no "No test files found"
    let run = try test(["-o", "TAP"], environment: Self.withoutMoonscript)
    #expect(reported(run) == ["ok a lua spec passes"], "\(run.stdout)\(run.stderr)")
    let only = try test(["spec/outcomes_spec.moon"], environment: Self.withoutMoonscript)
    #expect(only.status == 0 && only.stderr.isEmpty, "\(only.stdout)\(only.stderr)")
    let none = try test(["--pattern", "_nothing$"], environment: Self.withoutMoonscript)
    #expect(none.status == 2 && none.stderr.contains("No test files found matching Lua pattern: _nothing$"))
  }

  @Test(arguments: [
    (["--loaders=lua,foo"], "--loaders: no loader named 'foo' (there are lua, moonscript and terra)"),
    (["--loaders", "lua", "--loaders", "fennel"], "busted 2.3's fennel loader is not supported"),
    (["--loaders=lua,,moonscript"], "--loaders: no loader named ''"),
    (["--loaders=terra", "terra_spec.t"], "unable to load terra")
  ])
  func unknownLoadersAndTerraExitTwo(_ arguments: [String], _ message: String) throws {
    let run = try test(arguments)
    #expect(run.status == 2, "\(run.stdout)\(run.stderr)")
    #expect(run.stderr.contains(message), "\(run.stderr)")
  }
}
