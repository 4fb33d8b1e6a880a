// TestSuite: `taskrun test` on the host: busted's runner (busted/*.lua), each test an operation.
import CLua
import CLuaShim
import FoundationEssentials
import Glibc
import TaskEngine

/// One result as reports show it: a test, or an error outside a test (a file that does not
/// load, a describe body, a hook), where it is declared and how it ended.
public struct TestCase: Sendable {
  public enum Status: String, Sendable {
    case passed, failure, error, pending
  }
  public let name: String
  public let file: String
  public var line: Int
  public var status: Status?
  public var message: String?
  public var traceback: String?
  /// False for a test Ctrl-C stopped before it started: it neither passed nor failed.
  public var ran = true
  /// False for a test busted does not count: a before_each or lazy_setup above it failed
  /// (that failure is the error reported).
  public var counted = true
  /// Which block this is an error of (a file, describe or hook), nil for a test.
  public var outside = false
}

/// What `taskrun test` asks of the runner: busted's options, by their meaning.
public struct TestOptions: Sendable {
  /// Lua patterns a test's full name must match (any of them), or must not.
  public var filter: [String] = []
  public var filterOut: [String] = []
  /// `#tag`s in test or block names: run only these, or never these.
  public var tags: [String] = []
  public var excludeTags: [String] = []
  /// Full names to run (busted's --name: a test runs when one of them contains its full
  /// name), and to skip (--exclude-names-file: exactly these).
  public var names: [String] = []
  public var excludeNames: [String] = []
  /// --log-success: the file each passing test's full name is appended to.
  public var logSuccess: String?
  /// The order of files and of each block's tests: busted's shuffle (math.randomseed(seed),
  /// then math.random), or by name (sorting wins); `randomize()` in a block shuffles it.
  public var shuffleFiles = false
  public var shuffleTests = false
  public var sortFiles = false
  public var sortTests = false
  public var seed = 0
  /// Whether --seed (or .busted's `seed`) gave it: without, each --repeat round has its own.
  public var seedGiven = false
  /// --no-keep-going: nothing more starts after the first error or failure.
  public var keepGoing = true
  /// --lazy: setup and teardown are lazy_setup and lazy_teardown.
  public var lazy = false
  /// --lang: the language of luassert's messages (say's namespace).
  public var language = "en"
  public var timeout: Double?
  /// --list: declare every test and print its name; run none.
  public var list = false
  /// Pending tests are not reported at all (busted's --suppress-pending).
  public var suppressPending = false
  /// Each file restores the globals and package.loaded it found (busted's default).
  public var autoInsulate = true
  /// Put in front of package.path / package.cpath.
  public var lpath = ""
  public var cpath = ""
  /// `arg[-1]`, `arg[0]` and `arg[1...]`, as lua.c and busted set them.
  public var interpreter = ""
  public var program = ""
  public var arguments: [String] = []
  /// Lua statements run before the files (-e).
  public var statements: [String] = []
  /// --coverage: start LuaCov (with this configuration file, if any).
  public var coverage = false
  public var coverageConfig: String?
  /// A helper script (or module) run before the files, with `arg` = its options.
  public var helper = ""
  public var helperArguments: [String] = []
  /// The test file loaders, in order (busted's --loaders): lua, moonscript, terra.
  public var loaders = ["lua", "moonscript"]
  /// A busted output handler in Lua that reports the run (-o NAME taskrun does not report
  /// itself: gtest, sound, a file or a module), nil when a report of taskrun's own does; its
  /// -Xoutput options, and what busted's options table tells it.
  public var output: String?
  public var outputArguments: [String] = []
  public var enableSound = false
  public var verbose = false
  public var deferPrint = false
  /// Whether the handler colours its output by default (standard output is a terminal).
  public var color = false
  /// busted's `options.defaultOutput`: `utfTerminal` when standard output is a terminal, else
  /// `plainTerminal`, as busted's runner chooses it.
  public var defaultOutput = "utfTerminal"
  public init() {}
}

extension ScriptHost {
  /// Defines busted's runner with the real luassert; throws, saying how to install it, when
  /// luassert or say cannot be loaded.
  public func installTestRuntime() throws {
    let s = stack
    s.newTable()
    for (name, function) in testHostFunctions() {
      pushFunction(function)
      s.rawSet(-2, name)
    }
    let functions = s.ref()
    s.newTable()
    let shared = s.ref()
    defer { s.unref(functions); s.unref(shared) }
    for chunk in [
      "busted/declare.lua", "busted/run.lua", "busted/loaders.lua", "busted/base.lua", "busted/gtest.lua",
      "busted/json.lua", "busted/handlers.lua", "busted/files.lua"
    ] {
      loadChunk(chunk, as: "=[busted]")
      s.pushRef(functions)
      s.pushRef(shared)
      guard tl_pcall(L, 2, 1, 0) == LUA_OK else {
        defer { s.pop() }
        throw HostError(s.describe(-1))
      }
      if chunk == "busted/files.lua" { tests.runtime = s.ref() } else { s.pop() }
    }
  }

  /// Reads a `.busted` file: the task `run` names, else `default`, under `_all`, as lists
  /// of strings by option name.
  public func readBustedConfig(path: String, run: String?) throws -> [String: [String]] {
    var options: [String: [String]] = [:]
    try callRuntime(
      "config",
      results: { s in
        s.pushNil()
        while lua_next(s.L, -2) != 0 {
          defer { s.pop() }
          guard let key = s.string(-2), lua_type(s.L, -1) == LUA_TTABLE else { continue }
          options[key] = (0..<s.rawLength(-1)).compactMap { i in
            defer { s.pop() }
            s.rawGet(-1, i + 1)
            return s.stringOrNumber(-1)
          }
        }
      }
    ) { s in
      s.push(path)
      if let run { s.push(run) } else { s.pushNil() }
      return 2
    }
    return options
  }

  /// The busted version whose API and command line `taskrun test` follows (`require
  /// "busted".version`).
  public var bustedVersion: String {
    let s = stack
    s.pushRef(tests.runtime)
    _ = s.rawGet(-1, "version")
    defer { s.pop(2) }
    return s.string(-1) ?? "?"
  }

  /// Throws, naming `option`, for the first of `patterns` that is not a Lua pattern.
  public func checkPatterns(_ option: String, _ patterns: [String]) throws {
    try callRuntime("check_patterns") { s in
      s.push(option)
      pushList(patterns, on: s)
      return 2
    }
  }

  /// Whether `name` matches one of the Lua `patterns` (busted's test file `pattern`).
  public func fileName(_ name: String, matches patterns: [String]) -> Bool {
    let s = stack
    s.pushRef(tests.runtime)
    _ = s.rawGet(-1, "matches")
    s.push(name)
    pushList(patterns)
    defer { s.pop(2) }
    guard tl_pcall(L, 2, 1, 0) == LUA_OK else { return false }
    return s.boolean(-1)
  }

  /// Before the files: search paths, `arg`, -e, LuaCov and the helper; throws what failed.
  public func prepareTests(_ options: TestOptions) throws {
    try callRuntime("prepare") { s in
      s.newTable()
      for (key, list) in [
        ("filter", options.filter), ("filter_out", options.filterOut),
        ("tags", options.tags), ("exclude_tags", options.excludeTags),
        ("arguments", options.arguments), ("statements", options.statements),
        ("helper_arguments", options.helperArguments), ("names", options.names),
        ("exclude_names", options.excludeNames), ("loaders", options.loaders),
        ("output_arguments", options.outputArguments)
      ] {
        pushList(list, on: s)
        s.rawSet(-2, key)
      }
      for (key, text) in [
        ("lpath", options.lpath), ("cpath", options.cpath), ("helper", options.helper), ("language", options.language),
        ("interpreter", options.interpreter), ("program", options.program),
        ("default_output", options.defaultOutput)
      ] {
        s.push(text)
        s.rawSet(-2, key)
      }
      for (key, flag) in [
        ("list", options.list), ("suppress_pending", options.suppressPending), ("auto_insulate", options.autoInsulate),
        ("coverage", options.coverage), ("shuffle_files", options.shuffleFiles),
        ("shuffle_tests", options.shuffleTests),
        ("sort_files", options.sortFiles), ("sort_tests", options.sortTests), ("keep_going", options.keepGoing),
        ("lazy", options.lazy), ("seed_given", options.seedGiven),
        ("coverage", options.coverage), ("enable_sound", options.enableSound), ("verbose", options.verbose),
        ("defer_print", options.deferPrint), ("color", options.color)
      ] {
        s.push(flag)
        s.rawSet(-2, key)
      }
      if let output = options.output { s.push(output); s.rawSet(-2, "output") }
      if let config = options.coverageConfig { s.push(config); s.rawSet(-2, "coverage_config") }
      if let path = options.logSuccess { s.push(path); s.rawSet(-2, "log_success") }
      s.push(options.seed)
      s.rawSet(-2, "seed")
      if let timeout = options.timeout { s.push(timeout); s.rawSet(-2, "timeout") }
      return 1
    }
  }

  /// Loads the spec files and makes their operations, one file after another, `rounds`
  /// times; each file's operation declares its blocks and tests when it runs.
  public func planTests(files: [String], rounds: Int = 1) throws {
    scriptPath = files.first ?? scriptPath
    try callRuntime("plan") { s in
      pushList(files, on: s)
      s.push(rounds)
      return 2
    }
  }

  /// What an operation of the run reports: its test and the errors outside tests it met
  /// (see `TestRuntime.results`).
  public func testResults(for op: OperationNode) -> [TestCase] { tests.results(for: op) }

  /// The -o handler that did not load (busted/handlers.lua said so, and why, on standard
  /// error): the default report takes its place and the run fails, as in busted.
  public var testOutputFailed: String? { tests.outputFailed }
  /// Why --log-success's file is incomplete, if it is.
  public var testLogFailed: String? { tests.logFailed }

  private func pushList(_ list: [String], on s: LuaStack? = nil) {
    let s = s ?? stack
    s.newTable(array: Int32(list.count))
    for (i, item) in list.enumerated() {
      s.push(item)
      s.rawSet(-2, i + 1)
    }
  }

  /// Calls `runtime[name]` with what `arguments` pushes, as a coroutine run to its end.
  private func callRuntime(
    _ name: String, results: @escaping (LuaStack) -> Void = { _ in },
    arguments: (LuaStack) -> Int32
  ) throws {
    let s = stack
    s.pushRef(tests.runtime)
    _ = s.rawGet(-1, name)
    let function = s.ref()
    s.pop()
    defer { s.unref(function) }
    switch runToEnd(function: function, arguments: arguments, returned: { stack, _ in results(stack) }) {
    case .returned?: break
    case .failed(let failure)?:
      throw HostError(failure.message)
    case nil:
      throw HostError("taskrun test: \(name) never finished")
    }
  }

  /// What the Lua runner tells the host: a test's operation, its status, a pending end, an
  /// error outside a test, a test that does not count.
  private func testHostFunctions() -> [(String, HostFunction)] {
    [
      (
        "case",
        { host, s in
          guard let op = host.operation(at: 1, on: s) else { return 0 }
          host.tests.cases[op.id] = TestCase(
            name: s.string(2) ?? op.name, file: s.string(3) ?? "?",
            line: s.integer(4) ?? 0)
          return 0
        }
      ),
      (
        "status",
        { host, s in
          guard let op = host.operation(at: 1, on: s) else { return 0 }
          host.tests.cases[op.id]?.status = s.string(2).flatMap(TestCase.Status.init(rawValue:))
          host.tests.cases[op.id]?.message = s.string(3)
          host.tests.cases[op.id]?.traceback = s.string(4)
          return 0
        }
      ),
      (
        "skip",
        { host, s in
          guard let op = host.operation(at: 1, on: s) else { return 0 }
          host.tests.skipOnReturn[op] = s.string(2) ?? "pending"
          return 0
        }
      ),
      (
        "block",
        { host, s in  // block(op, name, file, line): a block's body runs in op
          guard let op = host.operation(at: 1, on: s) else { return 0 }
          var block = TestCase(name: s.string(2) ?? op.name, file: s.string(3) ?? "?", line: s.integer(4) ?? 0)
          block.outside = true
          host.tests.blocks[op.id] = block
          return 0
        }
      ),
      (
        "body",
        { host, s in  // body(op, block): with --timeout op runs the body of block's op
          guard let op = host.operation(at: 1, on: s), let block = host.operation(at: 2, on: s) else { return 0 }
          host.tests.blockBodies[op.id] = block.id
          return 0
        }
      ),
      (
        "declared",
        { host, s in  // its body has run: from here on it only waits for its tests
          guard let op = host.operation(at: 1, on: s) else { return 0 }
          host.tests.blocks[op.id] = nil
          host.tests.blockStops[op.id] = nil
          return 0
        }
      ),
      (
        "drop",
        { host, s in
          guard let op = host.operation(at: 1, on: s) else { return 0 }
          host.tests.cases[op.id]?.counted = false
          return 0
        }
      ),
      (
        "clock",
        { _, s in  // clock(): seconds on the monotonic clock (busted's monotime, for durations)
          var now = timespec()
          clock_gettime(CLOCK_MONOTONIC, &now)
          s.push(Double(now.tv_sec) + Double(now.tv_nsec) / 1e9)
          return 1
        }
      ),
      (
        "log_failed",
        { host, s in  // log_failed(message): a --log-success write failed
          if host.tests.logFailed == nil { host.tests.logFailed = s.string(1) ?? "?" }
          return 0
        }
      ),
      (
        "output_failed",
        { host, s in  // output_failed(name, message): the -o handler did not load
          host.tests.outputFailed = s.string(1) ?? "?"
          return 0
        }
      ),
      (
        "extra",
        { host, s in  // extra(op, status, name, file, line, message, traceback)
          guard let op = host.operation(at: 1, on: s) else { return 0 }
          var error = TestCase(name: s.string(3) ?? op.name, file: s.string(4) ?? "?", line: s.integer(5) ?? 0)
          error.status = s.string(2).flatMap(TestCase.Status.init(rawValue:)) ?? .error
          error.message = s.string(6)
          error.traceback = s.string(7)
          error.outside = true
          host.tests.errors[op.id, default: []].append(error)
          return 0
        }
      )
    ]
  }
}
