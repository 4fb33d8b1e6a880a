// Every busted 2.x option and .busted key in `taskrun test`, on the fixture project in
// Tests/TestMode/ordering: the order of files and tests (busted's seeded shuffle, sorting,
// randomize()), --no-keep-going, --name, --exclude-names-file, --log-success, --lazy,
// --no-recursive, the --no-X forms, and the keys busted reads or ignores.
import Foundation
import TestSupport
import Testing

@Suite struct BustedCommandLineTests {
  static let project = TestModeTests.fixtures.appendingPathComponent("ordering")
  static let busted = BustedCompatTests.busted

  func test(_ arguments: [String], in folder: URL = project, environment: [String: String] = [:]) throws -> Run {
    Binary.finish(try Binary.start(["test"] + arguments, in: folder, environment: environment))
  }

  /// The tests a TAP report names, in order (busted's `ok 3 - # SKIP name` and taskrun's
  /// `ok 3 - name # SKIP pending` alike).
  static func names(_ tap: String) -> [String] {
    tap.split(separator: "\n").compactMap { line -> String? in
      guard line.hasPrefix("ok ") || line.hasPrefix("not ok ") else { return nil }
      var name = line.split(separator: " - ", maxSplits: 1).dropFirst().first.map(String.init) ?? ""
      if name.hasPrefix("# SKIP ") { name = String(name.dropFirst(7)) }
      if let skip = name.range(of: " # SKIP") { name = String(name[..<skip.lowerBound]) }
      return name
    }
  }

  /// A copy of the fixture project with `.busted` holding `config`.
  func project(busted config: String) throws -> URL {
    let copy = Scratch.root.appendingPathComponent("ordering-\(UUID().uuidString)")
    try FileManager.default.copyItem(at: Self.project, to: copy)
    try config.write(to: copy.appendingPathComponent(".busted"), atomically: true, encoding: .utf8)
    return copy
  }

  static let orderings: [[String]] = [
    [], ["--shuffle", "--seed", "7"], ["--shuffle-files", "--seed", "12345"], ["--shuffle-tests", "--seed", "99"],
    ["--sort"], ["--shuffle", "--sort-tests", "--seed", "3"], ["--shuffle", "--no-shuffle-files", "--seed=5"],
    ["--sort-files", "--shuffle-tests", "--seed", "2"], ["--shuffle", "--seed", "4294967295"]
  ]

  @Test(
    .enabled(if: busted != nil, "busted is not installed (apt-get install lua-busted)"), arguments: orderings)
  func filesAndTestsRunInBustedsOrder(_ arguments: [String]) throws {
    let ours = try test(arguments + ["-o", "TAP"])
    let theirs = Binary.finish(
      try Binary.start(arguments + ["-o", "TAP"], in: Self.project, program: Self.busted!))
    let expected = Self.names(theirs.stdout)
    #expect(expected.count == 38, "busted ran the fixture: \(theirs.stdout)\(theirs.stderr)")
    #expect(Self.names(ours.stdout) == expected, "\(arguments): \(ours.stdout)\(ours.stderr)")
  }

  @Test func aSeedRepeatsItsOrderAndSortingSortsByName() throws {
    let plain = Self.names(try test(["-o", "TAP"]).stdout)
    let shuffled = try test(["--shuffle"])
    let seedLine = try #require(shuffled.stdout.split(separator: "\n").first)
    let seed = try #require(seedLine.split(separator: " ").dropFirst(3).first.map(String.init))
    #expect(seedLine.hasPrefix("Randomized with seed \(seed)"), "\(shuffled.stdout)")
    let once = Self.names(try test(["--shuffle", "--seed", seed, "-o", "TAP"]).stdout)
    let twice = Self.names(try test(["--shuffle", "--seed", seed, "-o", "TAP"]).stdout)
    #expect(once == twice && once.sorted() == plain.sorted() && once.count == 38)
    let orders = try (1...4).map { Self.names(try test(["--shuffle", "--seed", "\($0)", "-o", "TAP"]).stdout) }
    #expect(orders.contains { $0 != plain }, "some seed changes the order")
    #expect(Self.names(try test(["--seed", "3", "-o", "TAP"]).stdout) == plain, "--seed alone shuffles nothing")
    // A ROOT whose name ends like an option is not one.
    let copy = try project(busted: "return {}")
    try FileManager.default.moveItem(
      at: copy.appendingPathComponent("spec"), to: copy.appendingPathComponent("noshuffle"))
    let root = try test(["noshuffle"], in: copy)
    #expect(!root.stdout.contains("Randomized") && root.status == 1, "\(root.stdout)")
    // --repeat: each round draws a new seed, as busted does, unless --seed gives one.
    let seeded = Self.names(try test(["--shuffle", "--seed", "3", "--repeat", "2", "-o", "TAP"]).stdout)
    #expect(seeded.count == 76 && Array(seeded.prefix(38)) == Array(seeded.suffix(38)))
    let drawn = Self.names(try test(["--shuffle", "--repeat", "2", "-o", "TAP"]).stdout)
    #expect(drawn.count == 76 && Array(drawn.prefix(38)) != Array(drawn.suffix(38)))
    // --sort: files by path, each block's tests by name (the inner block's randomize(42) too).
    let sorted = Self.names(try test(["--sort", "--shuffle", "-o", "TAP"]).stdout)
    #expect(Array(sorted.prefix(4)) == ["A a1", "A a2", "A a3", "A a4"], "\(sorted)")
    #expect(sorted.last == "deep" && sorted.firstIndex(of: "f1 x")! < sorted.firstIndex(of: "f2 x")!)
    let files = sorted.filter { $0.hasPrefix("f") && $0.count == 4 }.map { $0.prefix(2) }
    #expect(files == files.sorted(), "\(files)")
    for bad in ["1.5", "x", "1e300"] {
      let run = try test(["--shuffle", "--seed", bad])
      #expect(run.status == 2 && run.stderr.contains("--seed must be a whole number"), "\(bad): \(run.stderr)")
    }
  }

  @Test func noKeepGoingStopsAtTheFirstFailure() throws {
    let all = try test(["-o", "TAP"])
    #expect(all.status == 1 && Self.names(all.stdout).contains("K k3"))
    for arguments in [["--no-keep-going"], ["-k", "--no-keep-going"]] {
      let run = try test(arguments + ["-o", "TAP"])
      let names = Self.names(run.stdout)
      #expect(run.status == 1 && names.last == "K k2 fails", "\(run.stdout)")
      #expect(!names.contains("K k3") && !names.contains("deep"))
    }
    let kept = try test(["--no-keep-going", "--keep-going", "-o", "TAP"])
    #expect(Self.names(kept.stdout).contains("deep"), "the last of -k/--no-keep-going wins")
    let config = try project(busted: #"return { default = { ["keep-going"] = false } }"#)
    #expect(Self.names(try test(["-o", "TAP"], in: config).stdout).last == "K k2 fails")
  }

  @Test func nameExcludeNamesAndLogSuccess() throws {
    let named = try test(["--name", "A a1", "--name=K k1", "-o", "TAP"])
    #expect(Self.names(named.stdout) == ["A a1", "K k1"], "a test runs when a --name contains its full name")
    let list = Scratch.root.appendingPathComponent("names-\(UUID().uuidString)")
    try "A a1\nf1 x\n".write(to: list, atomically: true, encoding: .utf8)
    let log = Scratch.root.appendingPathComponent("log-\(UUID().uuidString)")
    try "before\n".write(to: log, atomically: true, encoding: .utf8)
    let run = try test([
      "--exclude-names-file", list.path, "--log-success", log.path, "spec/f1_spec.lua", "spec/k_spec.lua", "-o", "TAP"
    ])
    #expect(Self.names(run.stdout) == ["f1 y", "f1 z", "K k1", "K k2 fails", "K k3"], "\(run.stdout)")
    #expect(try String(contentsOf: log, encoding: .utf8) == "before\nf1 y\nf1 z\nK k1\nK k3\n")
    let missing = try test(["--exclude-names-file", "/nonexistent/names"])
    #expect(missing.status == 2 && missing.stderr.contains("--exclude-names-file"), "\(missing.stderr)")
    let unwritable = try test(["--log-success", "/nonexistent/log"])
    #expect(unwritable.status == 2 && unwritable.stderr.contains("--log-success"), "\(unwritable.stderr)")
    // Neither waits: a FIFO without a reader, a device that never ends.
    let fifo = Scratch.root.appendingPathComponent("fifo-\(UUID().uuidString)")
    #expect(mkfifo(fifo.path, 0o600) == 0)
    let held = try test(["--log-success", fifo.path, "spec/f1_spec.lua"])
    #expect(held.status == 2 && held.stderr.contains("no reader on the FIFO"), "\(held.stderr)")
    for endless in [fifo.path, "/dev/zero"] {
      let run = try test(["--exclude-names-file", endless, "spec/f1_spec.lua"])
      #expect(run.status == 2 && run.stderr.contains("a regular file of at most 64 MiB"), "\(run.stderr)")
    }
  }

  @Test func recursiveLazyAndDeferPrint() throws {
    #expect(!Self.names(try test(["--no-recursive", "-o", "TAP"]).stdout).contains("deep"))
    #expect(Self.names(try test(["-R", "-o", "TAP"]).stdout).contains("deep"))
    let recursive = try project(busted: "return { default = { recursive = false } }")
    #expect(!Self.names(try test(["-o", "TAP"], in: recursive).stdout).contains("deep"))
    let strict = try test(["lazy_spec.lua", "--exclude-tags", "skip", "-o", "TAP"])
    #expect(strict.stdout.contains("# SETUP RAN"), "setup is strict: \(strict.stdout)")
    let lazy = try test(["lazy_spec.lua", "--exclude-tags", "skip", "--lazy", "-o", "TAP"])
    #expect(lazy.status == 0 && !lazy.stdout.contains("SETUP RAN"), "--lazy: no test, no setup: \(lazy.stdout)")
    let deferred = try test(["spec/f1_spec.lua", "--defer-print"])
    #expect(deferred.stdout.hasPrefix("\n3 tests from 1 file"), "no marks while it runs: \(deferred.stdout)")
    #expect(try test(["spec/f1_spec.lua"]).stdout.hasPrefix("●●●\n"))
  }

  @Test func timeoutBoundsTheHooksABlockRuns() throws {
    let started = Date()
    let run = try test(["--timeout", "1", "timeout/hook_spec.lua", "-o", "TAP"])
    #expect(Date().timeIntervalSince(started) < 30, "neither hook held the run")
    #expect(Self.names(run.stdout) == ["hooks setup", "later runs", "later teardown", "last"], "\(run.stdout)")
    #expect(run.stdout.contains("timeout/hook_spec.lua:3: the setup hook timed out after 1 s"), "\(run.stdout)")
    #expect(run.status == 1 && run.stdout.hasSuffix("# 2 passed, 2 failed\n"))
  }

  /// What a hostile spec, .busted file or option gives is refused or bounded, never a hang.
  @Test func hostileInputIsRefusedOrBounded() throws {
    let deep = try test(["hostile/deep_spec.lua", "-o", "TAP"], environment: ["DEPTH": "250"])
    #expect(deep.status == 1 && deep.stdout.contains("blocks nest more than 200 deep"), "\(deep.stdout)")
    let fine = try test(["hostile/deep_spec.lua", "-o", "TAP"], environment: ["DEPTH": "150"])
    #expect(fine.status == 0 && Self.names(fine.stdout).count == 1)
    // A FIFO among the specs is not a spec (its first read would wait forever).
    let folder = try project(busted: "return {}")
    #expect(mkfifo(folder.appendingPathComponent("spec/fifo_spec.lua").path, 0o600) == 0)
    let found = try test(["-o", "TAP"], in: folder)
    #expect(Self.names(found.stdout).count == 38, "\(found.stdout)\(found.stderr)")
    let named = try test(["spec/fifo_spec.lua"], in: folder)
    #expect(named.status == 2 && named.stderr.contains("spec/fifo_spec.lua: not a regular file or folder"))
    for (config, message) in [
      ("return { default = { tags = { 1, 2 } } }", "'tags' must be a list of strings (item 1 is a number)"),
      ("return { default = { filter = print } }", "'filter' must be a string, a number, a boolean or a list")
    ] {
      let run = try test([], in: try project(busted: config))
      #expect(run.status == 2 && run.stderr.contains(message), "\(config): \(run.stderr)")
    }
    let ignored = try test(["-o", "TAP"], in: try project(busted: "return { default = { unknown = print } }"))
    #expect(ignored.status == 1 && Self.names(ignored.stdout).count == 38, "a key busted ignores is ignored")
    for (option, pattern, message) in [
      ("-p", "[", "--pattern '[': malformed pattern (missing ']')"),
      ("--exclude-pattern", "%", "--exclude-pattern '%': malformed pattern (ends with '%')")
    ] {
      let run = try test([option, pattern])
      #expect(run.status == 2 && run.stderr.contains(message), "\(run.stderr)")
    }
    #expect(try test(["--repeat", "1e1", "spec/f1_spec.lua", "-o", "TAP"]).stdout.contains("# 30 passed"))
    let half = try test(["--repeat", "1.5", "spec/f1_spec.lua"])
    #expect(half.status == 2 && half.stderr.contains("--repeat must be a whole number (got 1.5)"))
    let negative = try test(["--shuffle", "--seed", "-5", "-o", "TAP"])
    #expect(negative.status == 1 && Self.names(negative.stdout).count == 38, "\(negative.stderr)")
    let full = try test(["--log-success", "/dev/full", "spec/f1_spec.lua"])
    #expect(full.status == 1 && full.stderr.contains("No space left on device; the file is incomplete"))
    // A handler whose function returns no handler is said so, not an error inside taskrun.
    let handlers = try project(busted: "return {}")
    try "return function() return 5 end".write(
      to: handlers.appendingPathComponent("five.lua"), atomically: true, encoding: .utf8)
    let five = try test(["-o", "./five.lua", "spec/f1_spec.lua"], in: handlers)
    #expect(
      five.status == 2 && five.stderr.contains("./five.lua: an output handler's function must return a handler")
        && !five.stderr.contains("[busted]"), "\(five.stderr)")
    let listed = try test(["-l", "--suppress-pending", "spec/a_spec.lua"])
    #expect(listed.status == 0 && !listed.stdout.contains("A p1") && listed.stdout.contains("A a1"))
  }

  /// A .busted file that loops is stopped by Ctrl-C, as everything else is.
  @Test func ctrlCStopsABustedFileThatLoops() throws {
    let folder = try project(busted: "while true do end")
    let started = try Binary.start(["test"], in: folder)
    usleep(500_000)
    kill(started.child.pid, SIGINT)
    let run = Binary.finish(started, timeout: 20)
    #expect(run.status == 130, "\(run.stderr)")
  }

  /// Each option busted 2.x has (and its --no- form) is taken; a run with all of them passes.
  @Test(arguments: [
    ["--no-coverage"], ["--no-verbose"], ["-v"], ["--no-auto-insulate"], ["--no-suppress-pending"],
    ["--no-defer-print"], ["--no-shuffle"], ["--no-sort"], ["--no-lazy"], ["-k"], ["--keep-going"],
    ["--no-shuffle-files"], ["--no-shuffle-tests"], ["--no-sort-files"], ["--no-sort-tests"], ["--no-enable-sound"],
    ["--lpath="], ["--lpath", ""], ["-m", ""], ["--cpath="], ["-Xoutput", "--color"], ["-Xhelper", "--x"],
    ["--lang", "de"], ["--lang=en"], ["--loaders", "lua"], ["--ignore-lua", "--lua", "nosuchlua"], ["--recursive"],
    ["--repeat=2"], ["--exclude-pattern="], ["--no-coverage", "--coverage-config-file", "x"], ["--seed", "0x10"]
  ])
  func everyOptionIsTaken(_ arguments: [String]) throws {
    let run = try test(arguments + ["spec/f1_spec.lua"])
    #expect(run.status == 0, "\(arguments): \(run.stdout)\(run.stderr)")
  }

  @Test func versionLuaAndLang() throws {
    let version = try test(["--version"])
    #expect(version.status == 0 && version.stdout.hasPrefix("2."), "\(version.stdout)\(version.stderr)")
    if let busted = Self.busted {
      let theirs = Binary.finish(try Binary.start(["--version"], in: Self.project, program: busted))
      #expect(version.stdout == theirs.stdout, "the version of busted's API taskrun follows")
    }
    let lua = try test(["--lua", "/bin/sh", "-e", "print('INTERPRETER=' .. arg[-1])", "spec/f1_spec.lua", "-o", "TAP"])
    #expect(lua.stdout.contains("# INTERPRETER=/bin/sh"), "--lua names arg[-1]: \(lua.stdout)\(lua.stderr)")
    let missing = try test(["--lua", "no-such-lua-here"])
    #expect(missing.status == 2 && missing.stderr.contains("--lua: no Lua interpreter 'no-such-lua-here'"))
    let ignored = try test(["--lua", "/bin/sh", "--ignore-lua", "-e", "print('INTERPRETER=' .. arg[-1])", "-o", "TAP"])
    #expect(!ignored.stdout.contains("INTERPRETER=/bin/sh"), "\(ignored.stdout)")
    // A string set under --lang's namespace is not English's.
    let probe = "local s = require('say'); s:set('k', 'X'); s:set_namespace('en'); print('K=' .. tostring(s('k')))"
    let german = try test(["--lang", "de", "-e", probe, "spec/f1_spec.lua", "-o", "TAP"])
    let english = try test(["-e", probe, "spec/f1_spec.lua", "-o", "TAP"])
    #expect(german.stdout.contains("# K=nil") && english.stdout.contains("# K=X"), "\(german.stdout)\(english.stdout)")
    let unknown = try test(["--lang", "xx"])
    #expect(unknown.status == 2 && unknown.stderr.contains("busted has no language 'xx'"), "\(unknown.stderr)")
  }

  /// busted reads a .busted key by the option's long name: `shuffle`, `sort` and short names
  /// are not read (busted's command line expands those; its file does not).
  @Test func bustedFileKeysAreReadAsBustedReadsThem() throws {
    let plain = Self.names(try test(["-o", "TAP"]).stdout)
    let ignored = try project(
      busted: #"return { default = { shuffle = true, sort = true, p = "f1", v = true, t = "x" } }"#)
    #expect(Self.names(try test(["-o", "TAP"], in: ignored).stdout) == plain)
    let read = try project(busted: #"return { default = { ["shuffle-files"] = true, seed = 77, pattern = "f%d" } }"#)
    let files = Self.names(try test(["-o", "TAP"], in: read).stdout)
    #expect(files.count == 18 && files != plain.filter { $0.hasPrefix("f") }, "\(files)")
    let again = Self.names(try test(["-o", "TAP", "--shuffle-files", "--seed", "77", "-p", "f%d"]).stdout)
    #expect(files == again, "the file's seed and flag are the command line's")
    let folder = try project(busted: #"return { default = { directory = "spec/sub", ROOT = { "." } } }"#)
    #expect(Self.names(try test(["-o", "TAP"], in: folder).stdout) == ["deep"], "a .busted directory is where it runs")
  }

  @Test func noCoverageOverridesTheFileAndTheHintSaysHow() throws {
    let covered = Self.project.appendingPathComponent("cov")
    let missing = try test([], in: covered, environment: ["LUA_PATH_5_4": "/nonexistent/?.lua;;"])
    #expect(missing.status == 2, "\(missing.stdout)")
    #expect(
      missing.stderr.contains("LuaCov is not installed") && missing.stderr.contains("--no-coverage")
        && !missing.stderr.contains("apt-get install lua-luacov"), "\(missing.stderr)")
    let run = try test(["--no-coverage"], in: covered, environment: ["LUA_PATH_5_4": "/nonexistent/?.lua;;"])
    #expect(run.status == 0 && run.stdout.hasSuffix("\n3 passed, 0 failed\n"), "\(run.stdout)\(run.stderr)")
  }
}
