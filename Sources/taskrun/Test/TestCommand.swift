// TestCommand: `taskrun test [ROOT...]`: busted's command line, each test an operation.
import ArgumentParser
import FoundationEssentials
import Glibc
import LuaHost
import TaskEngine

struct TestCommand: ParsableCommand, InvokedCommand {
  static let configuration = CommandConfiguration(
    commandName: "test",
    abstract: "Run busted specs with the real luassert; each test is an operation.",
    usage: "taskrun test [ROOT...] [busted's options] [-j N] [--timeout S]",
    discussion: """
      ROOTs are spec files or folders searched for files whose name matches --pattern \
      (default: _spec; ROOT default: spec/, else tests/). Options keep busted's names and \
      meanings, and a .busted file in the folder supplies their defaults (its -r/--run task, \
      else `default`, under `_all`). Tests of a file run in declared order; files run one \
      after another; tests tagged #parallel may overlap their neighbours (up to -j at once). \
      Exit codes: 0 all passed; 1 a test failed or errored; 2 usage error; 130 interrupted.
      """)

  @Argument(help: "Spec files, or folders to search (default: spec/, else tests/).")
  var roots: [String] = []

  @Option(
    name: [.customShort("p"), .long],
    help: "Only run files whose name matches this Lua pattern (default: _spec; repeatable).")
  var pattern: [String] = []

  @Option(
    name: .customLong("exclude-pattern"), help: "Do not run files whose name matches this Lua pattern (repeatable).")
  var excludePattern: [String] = []

  @Option(name: [.customShort("C"), .long], help: "Change to DIR first (repeatable, each relative to the one before).")
  var directory: [String] = []

  @Option(name: [.customShort("f"), .customLong("config-file")], help: "Read options from FILE instead of ./.busted.")
  var configFile: String?

  @Option(
    name: [.customShort("r"), .customLong("run")], help: "The task of the .busted file to run (default: `default`).")
  var task: String?

  @Option(
    name: [.customShort("o"), .long],
    help: """
      utfTerminal (default), plainTerminal, TAP, json, junit, gtest, sound, or a busted output \
      handler: a .lua file, else a module (busted.outputHandlers.NAME, else NAME).
      """)
  var output: String?

  @Option(
    name: .customLong("Xoutput", withSingleDash: true), parsing: .unconditionalSingleValue,
    help: """
      An option for the output, split at commas (junit: the file to write; utfTerminal, \
      gtest: --color, --plain; a handler's: its options.arguments).
      """)
  var outputOptions: [String] = []

  @Option(help: "A Lua file (or module) run before the specs.")
  var helper: String?

  @Option(
    name: .customLong("Xhelper", withSingleDash: true), parsing: .unconditionalSingleValue,
    help: "An option for the helper (its `arg`).")
  var helperOptions: [String] = []

  @Option(
    name: [.customShort("m"), .long],
    help: "Put in front of package.path (default: ./src/?.lua;./src/?/?.lua;./src/?/init.lua).")
  var lpath: [String] = []

  @Option(help: "Put in front of package.cpath (default: ./csrc/?.so;./csrc/?/?.so).")
  var cpath: [String] = []

  @Option(
    help: "Test file loaders, first match wins: lua (.lua), moonscript (.moon), terra (.t) (default: lua,moonscript).")
  var loaders: [String] = []

  @Option(name: .customShort("e"), help: "Run this Lua statement before the specs (repeatable).")
  var statements: [String] = []

  @Option(name: .customLong("repeat"), parsing: .unconditional, help: "Run the specs COUNT times (1 to 1,000,000).")
  var repeatCount: String?

  @Flag(name: [.customShort("l"), .long], help: "Print the name of every test instead of running them.")
  var list = false

  @Flag(
    name: .customLong("auto-insulate"), inversion: .prefixedNo,
    help: "Each file restores the globals and modules it found (default).")
  var autoInsulate: Bool?

  @Flag(name: .customLong("suppress-pending"), inversion: .prefixedNo, help: "Do not report pending tests.")
  var suppressPending: Bool?

  @Flag(name: [.customShort("c"), .long], inversion: .prefixedNo, help: "Measure coverage with LuaCov.")
  var coverage: Bool?

  @Option(name: .customLong("coverage-config-file"), help: "LuaCov's configuration file.")
  var coverageConfigFile: String?

  @Option(help: "Run only tests whose full name matches this Lua pattern (repeatable).")
  var filter: [String] = []

  @Option(name: .customLong("filter-out"), help: "Skip tests whose full name matches this Lua pattern (repeatable).")
  var filterOut: [String] = []

  @Option(help: "Run only tests whose full name this names (repeatable).")
  var name: [String] = []

  @Option(name: .customLong("exclude-names-file"), help: "Skip the tests whose full names are lines of FILE.")
  var excludeNamesFile: String?

  @Option(name: .customLong("log-success"), help: "Append the full name of each test that passes to FILE.")
  var logSuccess: String?

  @Option(name: [.customShort("t"), .long], help: "Run only tests with one of these #tags (comma-separated).")
  var tags: [String] = []

  @Option(name: .customLong("exclude-tags"), help: "Never run tests with one of these #tags (comma-separated).")
  var excludeTags: [String] = []

  @Flag(inversion: .prefixedNo, help: "Shuffle files and tests (--shuffle-files and --shuffle-tests).")
  var shuffle: Bool?

  @Flag(name: .customLong("shuffle-files"), inversion: .prefixedNo, help: "Run files in a random order.")
  var shuffleFiles: Bool?

  @Flag(
    name: .customLong("shuffle-tests"), inversion: .prefixedNo, help: "Run tests in a random order within each block.")
  var shuffleTests: Bool?

  @Flag(
    inversion: .prefixedNo, help: "Sort files and tests by name (--sort-files and --sort-tests; wins over shuffling).")
  var sort: Bool?

  @Flag(name: .customLong("sort-files"), inversion: .prefixedNo, help: "Run files in name order.")
  var sortFiles: Bool?

  @Flag(name: .customLong("sort-tests"), inversion: .prefixedNo, help: "Run tests in name order within each block.")
  var sortTests: Bool?

  @Option(
    parsing: .unconditional, help: "The seed of the random order (busted's: the same seed gives busted's order).")
  var seed: String?

  @Flag(
    name: [.customShort("k"), .customLong("keep-going")], inversion: .prefixedNo,
    help: "Go on after an error or failure (default; --no-keep-going stops at the first).")
  var keepGoing: Bool?

  @Flag(
    name: [.customShort("R"), .customLong("recursive")], inversion: .prefixedNo,
    help: "Search ROOT folders' subfolders too (default).")
  var recursive: Bool?

  @Flag(inversion: .prefixedNo, help: "setup and teardown are lazy_setup and lazy_teardown.")
  var lazy: Bool?

  @Flag(name: .customLong("defer-print"), inversion: .prefixedNo, help: "Print the marks when the suite is complete.")
  var deferPrint: Bool?

  @Option(help: "The language of messages (busted's: en, de, fr, ...).")
  var lang: String?

  @Option(help: "The Lua interpreter a spec sees as arg[-1] (specs run in taskrun's Lua 5.4).")
  var lua: String?

  @Flag(name: .customLong("ignore-lua"), help: "Ignore --lua.")
  var ignoreLua = false

  @Flag(
    name: [.customShort("s"), .customLong("enable-sound")], inversion: .prefixedNo,
    help: "Say the outcome aloud at the end (busted's sound output; espeak).")
  var enableSound: Bool?

  @Flag(help: "Print the busted version taskrun test follows and exit.")
  var version = false

  @Option(
    name: [.customShort("j"), .customLong("jobs")], help: "Tests tagged #parallel that run at once (default: cores).")
  var jobs: Int?

  @Option(help: "Seconds each test, and each describe body, may take before it is stopped and counted as an error.")
  var timeout: Double?

  @Flag(help: "Same as -o TAP.")
  var tap = false

  @Option(help: "Also write a JUnit XML report to FILE.")
  var junit: String?

  @Option(help: "Write the run's events as NDJSON to FILE ('-' = stderr).")
  var events: String?

  @Flag(name: .shortAndLong, inversion: .prefixedNo, help: "A line per test with its time, and error tracebacks.")
  var verbose: Bool?

  @Flag(name: .customLong("no-color"), help: "No colour (also NO_COLOR).")
  var noColor = false

  func validate() throws {
    if let jobs, jobs < 1 { throw ValidationError("-j must be at least 1 (got \(jobs))") }
    if let timeout, !(timeout > 0 && timeout <= Limits.maxSeconds) {
      throw ValidationError(
        "--timeout must be a number of seconds from 0 to \(formatNumber(Limits.maxSeconds)) (got \(timeout))")
    }
    if tap && output != nil { throw ValidationError("--tap and -o cannot be used together") }
    if tap && verbose == true { throw ValidationError("--tap and -v cannot be used together") }
  }

  func run(_ invocation: Invocation, choice: CommandChoice) throws {
    let start = FileManager.default.currentDirectoryPath
    // Our own report files are named from where taskrun started; busted's from -C's folder.
    let junitPath = junit.map { absolute($0, from: start) }
    let eventsPath = events.map { $0 == "-" ? $0 : absolute($0, from: start) }
    if !directory.isEmpty {
      let folder = directory.reduce("") { absolute($1, from: $0) }
      guard FileManager.default.changeCurrentDirectoryPath(folder) else {
        usage("cannot change to directory '\(folder)'")
      }
    }
    let session = Session(
      jobs: jobs, keepGoing: true, display: .sinks([]),
      host: .init(arguments: invocation.scriptArguments))
    let scheduler = session.scheduler
    let host = session.host
    // Ctrl-C reaches Lua from here on: a .busted file or a helper that loops is stopped too.
    session.attachSignals()
    do { try host.installTestRuntime() } catch let error as HostError { usage(error.description) }
    if version {
      print(host.bustedVersion)
      Taskrun.leave(ExitCode.success.rawValue)
    }
    let settings: TestSettings
    do {
      let config = try config(host)
      // A .busted `directory` is where the run goes when -C does not say.
      if directory.isEmpty, let folder = config["directory"]?.first,
        !FileManager.default.changeCurrentDirectoryPath(folder)
      {
        usage(".busted: cannot change to directory '\(folder)'")
      }
      settings = try TestSettings(self, config: config)
    } catch let error as HostError {
      session.finishIfStopped(noteInterrupted: false)
      usage(error.description)
    }
    let color = ColorPolicy.decide(disabled: noColor, isTerminal: Session.outputIsTerminal)
    var options = settings.options
    options.color = color.enabled
    options.defaultOutput = isatty(STDOUT_FILENO) != 0 ? "utfTerminal" : "plainTerminal"  // busted's runner
    // A report that cannot be written is a usage error found before anything runs.
    let junitReport = try junitPath.map(JUnitReport.open(path:))
    let report: any TestReport
    do { report = try settings.report(verbose: settings.verbose, color: color) } catch let error as HostError {
      usage(error.description)
    }
    let results = TestResults(reports: [report] + (junitReport.map { [$0] } ?? [])) { name in
      scheduler.operation(named: name).map(host.testResults(for:)) ?? []
    }
    scheduler.sinks.append(results)
    do { try session.addReports(events: eventsPath, trace: nil, folder: AT_FDCWD, progressTicks: false) } catch {
      usage("\(error)")
    }
    do {
      let files = try settings.files(host)
      try host.prepareTests(options)
      try host.planTests(files: files, rounds: settings.rounds)
    } catch let error as HostError {
      session.finishIfStopped(noteInterrupted: false)
      scheduler.processes.endDescendants()
      usage(error.description)
    }
    if host.testOutputFailed != nil, let lua = report as? LuaHandlerReport {
      // busted's defaultOutput: utfTerminal on a terminal, else plainTerminal (no colour)
      let onTerminal = options.defaultOutput == "utfTerminal"
      lua.fallback = TestReporter(
        verbose: settings.verbose, color: onTerminal ? color : ColorPolicy(enabled: false),
        marks: onTerminal ? .utf : .plain)
    }
    let o = settings.options
    let shuffled = (o.shuffleFiles && !o.sortFiles) || (o.shuffleTests && !o.sortTests)
    report.started(seed: shuffled ? o.seed : nil)
    let summary = host.run(try host.select(targets: []))
    let counts = TestCounts(results.results)
    if let why = host.testLogFailed, let path = settings.options.logSuccess {
      writeStandardError("taskrun: cannot write to --log-success's '\(path)': \(why); the file is incomplete\n")
    }
    let writeFailed =
      junitReport?.writeError != nil || (report as? JUnitReport)?.writeError != nil || host.testLogFailed != nil
    let code: ExitCode =
      summary.interrupted || scheduler.interrupts > 0
      ? .interrupted
      : writeFailed || counts.failed > 0 || host.testOutputFailed != nil ? .failure : .success
    session.finish(code: code.rawValue)
  }

  /// The .busted file's options (-f's file, else ./.busted if there is one).
  private func config(_ host: ScriptHost) throws -> [String: [String]] {
    if let configFile {
      guard FileManager.default.fileExists(atPath: configFile) else {
        throw HostError("specified config file '\(configFile)' not found")
      }
      return try host.readBustedConfig(path: configFile, run: task)
    }
    guard FileManager.default.fileExists(atPath: ".busted") else {
      if let task { throw HostError("-r \(task): there is no .busted file here") }
      return [:]
    }
    return try host.readBustedConfig(path: ".busted", run: task)
  }

  /// busted's `--lpath=` (an empty value) as two words: swift-argument-parser takes
  /// `--lpath=` for a missing value. What follows -Xoutput or -Xhelper is theirs, as it is.
  static func emptyValues(_ words: [String]) -> [String] {
    var result: [String] = []
    var taken = false  // the word is an -X option's value
    for (index, word) in words.enumerated() {
      if word == "--" { return result + words[index...] }
      if !taken, word.hasPrefix("--"), word.count > 3, word.firstIndex(of: "=") == word.index(before: word.endIndex) {
        result += [String(word.dropLast()), ""]
      } else {
        result.append(word)
      }
      taken = !taken && (word == "-Xoutput" || word == "-Xhelper")
    }
    return result
  }

  private func absolute(_ path: String, from folder: String) -> String {
    path.hasPrefix("/") || folder.isEmpty ? path : folder.hasSuffix("/") ? folder + path : folder + "/" + path
  }

  private func usage(_ message: String) -> Never {
    writeStandardError("taskrun: \(message)\n")
    Taskrun.leave(ExitCode.usage.rawValue)
  }
}
