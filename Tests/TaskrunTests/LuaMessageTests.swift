// What a script's failures look like to its user: exit codes of awaited failures, and error messages compared with lua5.4's.
import Foundation
import TestSupport
import Testing

@Suite struct AwaitedFailureTests {
  /// A failed operation is exit 1 whichever way the top level awaited it; an uncaught wait
  /// ends the script at that line, with the line printed and the summary, no traceback.
  @Test(arguments: ["wait(a)", "a:wait()", "print(run(a))", "print(pcall(wait, a))"])
  func aFailedOperationIsExitOne(_ awaiting: String) throws {
    let run = try ScriptRun.run(
      """
      a = operation { name = "a", run = function() error("bad") end }
      \(awaiting)
      """, timeout: 60)
    #expect(run.status == 1, "\(run.stdout)\(run.stderr)")
    #expect(run.stderr.contains("FAILED    a (") && run.stderr.contains("a: w.lua:1: bad"), "\(run.stderr)")
    #expect(run.stdout.contains("0 succeeded, 1 failed"), "\(run.stdout)")
    #expect(!run.stderr.contains("main chunk"), "\(run.stderr)")
  }

  /// Another error after a caught wait is still a script error.
  @Test func anotherErrorAfterACaughtWaitIsAScriptError() throws {
    let run = try ScriptRun.run(
      """
      a = operation { name = "a", run = function() error("bad") end }
      pcall(wait, a)
      error("mine")
      """, timeout: 60)
    #expect(run.status == 2 && run.stderr.contains("taskrun: w.lua:3: mine"), "\(run.stdout)\(run.stderr)")
  }
}

/// Error messages taskrun shares with Lua compared with the real lua5.4's, case by case.
@Suite struct LuaComparisonTests {
  static let lua = "/usr/bin/lua5.4"

  /// The first line of what `program` wrote on stderr, without its "lua5.4: " or
  /// "taskrun: " prefix, and its stdout.
  func outcome(of script: String, program: String) throws -> (message: String, stdout: String) {
    let dir = Scratch.root.appendingPathComponent("taskrun-lua-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: dir) }
    try script.write(to: dir.appendingPathComponent("w.lua"), atomically: true, encoding: .utf8)
    let words = program == Self.lua ? ["w.lua"] : ["--progress", "plain", "w.lua"]
    let run = Binary.finish(try Binary.start(words, in: dir, program: program), timeout: 60)
    let first = run.stderr.split(separator: "\n").first.map(String.init) ?? ""
    let message = first.drop(while: { $0 != ":" }).dropFirst(2)
    return (String(message), run.stdout)
  }

  @Test(arguments: [
    "error(42)",
    "error(42.5)",
    "error(setmetatable({}, { __tostring = function() return 'custom' end }))",
    "local f = coroutine.wrap(function() end) f() f()",
    "local f = coroutine.wrap(function() error('x') end) f()",
    "local f = coroutine.wrap(function() error('x', 0) end) print(pcall(f))",
    """
    local f = coroutine.wrap(function()
      local x <close> = setmetatable({}, { __close = function(_, e) print('closed', e) end })
      error('inside')
    end)
    f()
    """,
    "print(setmetatable({}, { __tostring = function() error('boom') end }))",
    "print(tostring(setmetatable({}, { __tostring = function() return 5 end })))"
  ])
  func messagesMatchLua(_ script: String) throws {
    #expect(FileManager.default.isExecutableFile(atPath: Self.lua), "lua5.4 is needed to compare with")
    let lua = try outcome(of: script, program: Self.lua)
    #expect(!lua.message.isEmpty || !lua.stdout.isEmpty, "every case raises or prints in lua5.4")
    let taskrun = try outcome(of: script, program: Binary.url.path)
    #expect(taskrun.message == lua.message, "lua5.4: \(lua.message)")
    for line in lua.stdout.split(separator: "\n") {
      #expect(taskrun.stdout.contains(line), "lua5.4 printed '\(line)'; taskrun: \(taskrun.stdout)")
    }
  }

  /// Where taskrun raises and lua5.4 has no such rule, numbers are still written as Lua
  /// writes them, and a primitive that cannot wait says where it was called.
  @Test(arguments: [
    (
      "os.exit(256)", "w.lua:1: bad argument #1 to 'exit' (an exit status from 0 to 255 or a boolean expected, got 256)"
    ),
    (
      "os.exit(2.5)", "w.lua:1: bad argument #1 to 'exit' (an exit status from 0 to 255 or a boolean expected, got 2.5)"
    ),
    ("sleep(-1)", "w.lua:1: bad argument #1 to 'sleep' (a finite number of seconds ≥ 0 expected, got -1)")
  ])
  func numbersAreWrittenAsLuaWritesThem(_ script: String, _ message: String) throws {
    #expect(try outcome(of: script, program: Binary.url.path).message == message)
  }

  @Test func aPrimitiveThatCannotWaitSaysWhere() throws {
    let run = try ScriptRun.run(
      """
      operation { name = "a", observers = { observer { on_start = function(op)
        sleep(1)
      end } }, run = function() end }
      """, timeout: 60)
    #expect(
      run.stderr.contains(
        "observer on_start of 'a' failed: w.lua:2: attempt to yield across a C-call boundary (sleep waits only in"),
      "\(run.stderr)")
  }
}
