// TestSuite: `taskrun test` on the host: busted's API in Lua, each test an operation.
import CLua
import CLuaShim
import Foundation
import TaskEngine

/// One test as reports show it: where it is declared and how it ended.
public struct TestCase: Sendable {
  public enum Status: String, Sendable {
    case passed, failure, error, pending
  }
  public let name: String
  public let file: String
  public let line: Int
  public var status: Status?
  public var message: String?
  public var traceback: String?
  /// False for a test Ctrl-C stopped before it started: it neither passed nor failed.
  public var ran = true
}

/// Which tests run, in what order, and for how long each may.
public struct TestSelection: Sendable {
  /// Lua patterns a test's full name must match (any of them), or must not.
  public var filter: [String] = []
  public var filterOut: [String] = []
  /// `#tag`s in test or block names: run only these, or never these.
  public var tags: [String] = []
  public var excludeTags: [String] = []
  /// Shuffles files and tests within each block, reproducibly.
  public var seed: Int?
  public var timeout: Double?
  public init() {}
}

/// What a project's `.busted` file asks for (busted's `default` task over `_all`).
public struct BustedConfig: Sendable {
  /// Where the tests are (`ROOT`), which file names are tests (`pattern`, Lua patterns).
  public var roots: [String] = []
  public var patterns: [String] = []
  public var tags: [String] = []
  public var excludeTags: [String] = []
  public var filter: [String] = []
  public var filterOut: [String] = []
  public init() {}
  init(roots: [String], patterns: [String], tags: [String], excludeTags: [String],
       filter: [String], filterOut: [String]) {
    (self.roots, self.patterns, self.tags) = (roots, patterns, tags)
    (self.excludeTags, self.filter, self.filterOut) = (excludeTags, filter, filterOut)
  }
}

extension ScriptHost {
  /// Defines busted's globals (describe, it, assert, spy, …) and `require "luassert"`/`"say"`.
  public func installTestRuntime() {
    let s = stack
    guard tl_load(L, luassertSource, luassertSource.utf8.count, "=[luassert]", "t") == LUA_OK,
          tl_pcall(L, 0, 1, 0) == LUA_OK else { fatalError("luassert: \(s.describe(-1))") }
    let luassert = s.ref()
    guard tl_load(L, bustedSource, bustedSource.utf8.count, "=[busted]", "t") == LUA_OK else {
      fatalError("busted runtime: \(s.describe(-1))")
    }
    s.newTable()
    for (name, function) in testHostFunctions() {
      pushFunction(function)
      s.rawSet(-2, name)
    }
    s.pushRef(luassert)
    s.unref(luassert)
    guard tl_pcall(L, 2, 1, 0) == LUA_OK else { fatalError("busted runtime: \(s.describe(-1))") }
    testRuntime = s.ref()
  }

  /// Reads a `.busted` file; its `lpath` and `cpath` go in front of the search paths.
  public func readBustedConfig(path: String) throws -> BustedConfig {
    var config = BustedConfig()
    try callRuntime("config", results: { s in
      func list(_ key: String) -> [String] {
        defer { s.pop() }
        guard s.rawGet(-1, key) == LUA_TTABLE else { return [] }
        return (0..<s.rawLength(-1)).compactMap { i in
          defer { s.pop() }
          s.rawGet(-1, i + 1)
          return s.stringOrNumber(-1)
        }
      }
      config = BustedConfig(roots: list("roots"), patterns: list("pattern"), tags: list("tags"),
                            excludeTags: list("exclude_tags"), filter: list("filter"), filterOut: list("filter_out"))
    }) { s in s.push(path); return 1 }
    return config
  }

  /// Whether `name` matches one of the Lua `patterns` (busted's test file `pattern`).
  public func fileName(_ name: String, matches patterns: [String]) -> Bool {
    let s = stack
    s.pushRef(testRuntime)
    _ = s.rawGet(-1, "matches")
    s.push(name)
    s.newTable(array: Int32(patterns.count))
    for (i, pattern) in patterns.enumerated() {
      s.push(pattern)
      s.rawSet(-2, i + 1)
    }
    defer { s.pop(2) }
    guard tl_pcall(L, 2, 1, 0) == LUA_OK else { return false }
    return s.boolean(-1)
  }

  /// Adds a spec file. Its top level runs when its turn comes; a file that does not load or
  /// fails at its top level becomes one error, as in busted.
  public func collectTests(path: String) throws {
    scriptPath = path
    try callRuntime("collect") { s in s.push(path); return 1 }
  }

  /// Makes the operations of the files, one after another; each file's operation declares
  /// its blocks and tests when it runs and makes them operations in turn. Returns how many
  /// files there are.
  @discardableResult
  public func planTests(_ selection: TestSelection) throws -> Int {
    var count = 0
    try callRuntime("plan", results: { s in count = s.integer(-1) ?? 0 }) { s in
      s.newTable()
      for (key, list) in [("filter", selection.filter), ("filter_out", selection.filterOut),
                          ("tags", selection.tags), ("exclude_tags", selection.excludeTags)] {
        s.newTable(array: Int32(list.count))
        for (i, item) in list.enumerated() {
          s.push(item)
          s.rawSet(-2, i + 1)
        }
        s.rawSet(-2, key)
      }
      if let seed = selection.seed { s.push(seed); s.rawSet(-2, "seed") }
      if let timeout = selection.timeout { s.push(timeout); s.rawSet(-2, "timeout") }
      return 1
    }
    return count
  }

  /// The test an operation runs, with its status; one that ended without saying (a timeout,
  /// Ctrl-C) gets its status from the operation's outcome.
  public func testCase(for op: OperationNode) -> TestCase? {
    guard var test = testCases[op.id] else { return nil }
    test.ran = op.hasStarted || op.errorKind != .interrupted
    if test.status == nil, let outcome = op.outcome {
      switch outcome {
      case .succeeded: test.status = .passed
      case .skipped: test.status = .pending
      case .failed, .cancelled:
        test.status = .error
        test.message = "\(test.file):\(test.line): " + (op.error ?? outcome.rawValue)
      }
    }
    return test
  }

  /// Calls `runtime[name]` with what `arguments` pushes, as a coroutine run to its end.
  private func callRuntime(_ name: String, results: (LuaStack) -> Void = { _ in },
                           arguments: (LuaStack) -> Int32) throws {
    let s = stack
    s.pushRef(testRuntime)
    _ = s.rawGet(-1, name)
    let function = s.ref()
    s.pop()
    defer { s.unref(function) }
    switch runToEnd(function: function, arguments: arguments) {
    case .returned(let co, _)?:
      let stack = LuaStack(L: co.thread)
      results(stack)
      stack.setTop(0)
    case .failed(let failure)?:
      throw HostError(failure.message)
    case nil:
      throw HostError("taskrun test: \(name) never finished")
    }
  }

  /// What the Lua runtime tells the host: a test's operation, its status, a pending end.
  private func testHostFunctions() -> [(String, HostFunction)] {
    [
      ("case", { host, s in
        guard let op = host.operation(at: 1, on: s) else { return 0 }
        host.testCases[op.id] = TestCase(name: s.string(2) ?? op.name, file: s.string(3) ?? "?",
                                         line: s.integer(4) ?? 0)
        return 0
      }),
      ("status", { host, s in
        guard let op = host.operation(at: 1, on: s) else { return 0 }
        host.testCases[op.id]?.status = s.string(2).flatMap(TestCase.Status.init(rawValue:))
        host.testCases[op.id]?.message = s.string(3)
        host.testCases[op.id]?.traceback = s.string(4)
        return 0
      }),
      ("skip", { host, s in
        guard let op = host.operation(at: 1, on: s) else { return 0 }
        host.skipOnReturn[op] = s.string(2) ?? "pending"
        return 0
      }),
    ]
  }
}
