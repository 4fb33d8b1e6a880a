// TestCommand: `taskrun test [PATH...]`: busted specs, each test an operation.
import ArgumentParser
import Foundation
import LuaHost
import TaskEngine

struct TestCommand: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "taskrun test",
    abstract: "Run busted-style Lua test files (*_spec.lua, *_test.lua); each test is an operation.",
    usage: "taskrun test [PATH...] [--filter PATTERN] [--tap | --junit FILE] [-j N] [--timeout S]",
    discussion: """
      PATHs are test files or folders searched for *_spec.lua and *_test.lua (default: spec/, \
      else tests/; a .busted file's ROOT, pattern and lpath apply). Tests of a file run in declared order; files run one after another; tests \
      tagged #parallel may overlap their neighbours (up to -j at once). \
      Exit codes: 0 all passed; 1 a test failed or errored; 2 usage error; 130 interrupted.
      """)

  @Option(name: [.customShort("j"), .customLong("jobs")], help: "Tests tagged #parallel that run at once (default: cores).")
  var jobs: Int?

  @Option(help: "Run only tests whose full name matches this Lua pattern (repeatable).")
  var filter: [String] = []

  @Option(name: .customLong("filter-out"), help: "Skip tests whose full name matches this Lua pattern (repeatable).")
  var filterOut: [String] = []

  @Option(name: [.customShort("t"), .long], help: "Run only tests with one of these #tags (comma-separated).")
  var tags: [String] = []

  @Option(name: .customLong("exclude-tags"), help: "Never run tests with one of these #tags (comma-separated).")
  var excludeTags: [String] = []

  @Flag(help: "Run files and tests in a random order; the seed is printed.")
  var shuffle = false

  @Option(help: "The seed of a --shuffle order to repeat (implies --shuffle).")
  var seed: Int?

  @Option(help: "Seconds each test may take before it is stopped and counted as an error.")
  var timeout: Double?

  @Flag(help: "Print TAP version 14 instead of the readable report.")
  var tap = false

  @Option(help: "Also write a JUnit XML report to FILE.")
  var junit: String?

  @Option(help: "Write the run's events as NDJSON to FILE ('-' = stderr).")
  var events: String?

  @Flag(name: .shortAndLong, help: "A line per test with its time, and error tracebacks.")
  var verbose = false

  @Flag(name: .customLong("no-color"), help: "No colour (also NO_COLOR).")
  var noColor = false

  @Argument(help: "Test files, or folders to search.")
  var paths: [String] = []

  func validate() throws {
    if let jobs, jobs < 1 { throw ValidationError("-j must be at least 1 (got \(jobs))") }
    if let timeout, !(timeout > 0) { throw ValidationError("--timeout must be a positive number of seconds (got \(timeout))") }
    if tap && verbose { throw ValidationError("--tap and -v cannot be used together") }
  }

  func run() throws {
    let scheduler = Scheduler(jobs: jobs ?? ProcessInfo.processInfo.activeProcessorCount)
    scheduler.keepGoing = true
    let isTerminal = isatty(STDOUT_FILENO) != 0 && ProcessInfo.processInfo.environment["TERM"] != "dumb"
    let color = ColorPolicy.decide(disabled: noColor || tap, isTerminal: isTerminal)
    // A report that cannot be written is a usage error found before anything runs.
    if let junit, !FileManager.default.createFile(atPath: junit, contents: nil) {
      FileHandle.standardError.write(Data("taskrun: cannot write the JUnit report to '\(junit)'\n".utf8))
      throw Taskrun.Exit(.usage)
    }
    let junitReport = junit.map(JUnitReport.init(path:))
    let report: any TestReport = tap ? TapReporter() : TestReporter(verbose: verbose, color: color)
    let host = ScriptHost(scheduler: scheduler, arguments: RunCommand.scriptArguments)
    let results = TestResults(reports: [report] + (junitReport.map { [$0] } ?? [])) { name in
      scheduler.operation(named: name).flatMap(host.testCase(for:))
    }
    scheduler.sinks.append(results)
    if let events {
      do {
        scheduler.sinks.append(try EventsReporter(path: events))
      } catch {
        FileHandle.standardError.write(Data("taskrun: \(error)\n".utf8))
        throw Taskrun.Exit(.usage)
      }
    }
    Taskrun.attachSignals(scheduler)

    host.installTestRuntime()
    // A project's .busted file: where its specs are, which files are specs, its lpath.
    var config = BustedConfig()
    let files: [String]
    do {
      if FileManager.default.fileExists(atPath: ".busted") { config = try host.readBustedConfig(path: ".busted") }
      let patterns = config.patterns
      files = try Self.testFiles(paths.isEmpty ? config.roots : paths) { name in
        patterns.isEmpty ? name.hasSuffix("_spec.lua") || name.hasSuffix("_test.lua")
          : name.hasSuffix(".lua") && host.fileName(name, matches: patterns)
      }
    } catch let error as HostError {
      FileHandle.standardError.write(Data("taskrun: \(error.description)\n".utf8))
      throw Taskrun.Exit(.usage)
    }
    func split(_ lists: [String]) -> [String] { lists.flatMap { $0.split(separator: ",").map(String.init) } }
    var selection = TestSelection()
    selection.filter = filter.isEmpty ? config.filter : filter
    selection.filterOut = filterOut.isEmpty ? config.filterOut : filterOut
    selection.tags = tags.isEmpty ? config.tags : split(tags)
    selection.excludeTags = excludeTags.isEmpty ? config.excludeTags : split(excludeTags)
    selection.seed = seed ?? (shuffle ? Int.random(in: 1...2_147_483_646) : nil)
    selection.timeout = timeout
    do {
      for file in files { try host.collectTests(path: file) }
      try host.planTests(selection)
    } catch let error as HostError {
      if scheduler.halted || host.exitCode != nil {
        _ = host.settle()
        Taskrun.finish(host, code: ExitCode.interrupted.rawValue)
      }
      scheduler.processes.endDescendants()
      FileHandle.standardError.write(Data("taskrun: \(error.description)\n".utf8))
      throw Taskrun.Exit(.usage)
    }
    report.started(seed: selection.seed)
    let summary = host.run(try host.select(targets: []))
    let counts = TestCounts(results.results)
    let code: ExitCode = summary.interrupted || scheduler.interrupts > 0 ? .interrupted
      : junitReport?.writeError != nil || counts.failed > 0 ? .failure : .success
    Taskrun.finish(host, code: code.rawValue)
  }

  /// The test files: files given as they are, folders searched for file names that `isTest`
  /// (sorted); with no paths, spec/ or else tests/.
  static func testFiles(_ paths: [String], isTest: (String) -> Bool) throws -> [String] {
    let manager = FileManager.default
    var roots = paths
    if roots.isEmpty {
      guard let found = ["spec", "tests"].first(where: { isDirectory($0) }) else {
        throw HostError("no spec/ or tests/ folder here; give test files or folders (taskrun test PATH...)")
      }
      roots = [found]
    }
    var files: [String] = []
    for root in roots {
      guard manager.fileExists(atPath: root) else { throw HostError("no such test file or folder: \(root)") }
      guard isDirectory(root) else { files.append(root); continue }
      let found = (manager.enumerator(atPath: root)?.allObjects as? [String] ?? [])
        .filter { isTest(($0 as NSString).lastPathComponent) }
        .sorted()
        .map { root.hasSuffix("/") ? root + $0 : root + "/" + $0 }
      if found.isEmpty {
        throw HostError("no test files under \(root) (names ending in _spec.lua or _test.lua, or matching .busted's pattern)")
      }
      files += found
    }
    return files
  }

  private static func isDirectory(_ path: String) -> Bool {
    var directory: ObjCBool = false
    return FileManager.default.fileExists(atPath: path, isDirectory: &directory) && directory.boolValue
  }
}
