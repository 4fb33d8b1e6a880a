// Metamethods taskrun itself calls (__tostring of an error or of print's values, __close of a failed body) are bounded.
import Foundation
import TestSupport
import Testing

/// A script written to a scratch folder and run through the binary.
enum ScriptRun {
  /// Runs `script` as `w.lua` with `arguments`; `shell` wraps the command line for bash
  /// (`ulimit -v …; exec`), `timeout` bounds the wait (the run is interrupted, then killed).
  static func run(
    _ script: String, _ arguments: [String] = [], shell: String? = nil,
    timeout: Double = 60
  ) throws -> Run {
    let dir = Scratch.root.appendingPathComponent("taskrun-script-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: dir) }
    try script.write(to: dir.appendingPathComponent("w.lua"), atomically: true, encoding: .utf8)
    let words = ["--progress", "plain"] + arguments + ["w.lua"]
    guard let shell else { return Binary.finish(try Binary.start(words, in: dir), timeout: timeout) }
    let command = shell + " exec \"$0\" \"$@\""
    return Binary.finish(
      try Binary.start(
        ["-c", command, Binary.url.path] + words, in: dir,
        program: "/bin/bash"), timeout: timeout)
  }
}

@Suite struct MetamethodBoundTests {
  /// Each body fails in a way that makes the host call a metamethod that never ends; every
  /// one must fail on its own (well before the test's minute) and the run go on to `after`.
  @Test func aMetamethodThatNeverEndsFailsItsOperationAndTheRunGoesOn() throws {
    let run = try ScriptRun.run(
      """
      local forever = function() while true do end end
      operation { name = "error-object", timeout = 1, run = function() error(setmetatable({}, { __tostring = forever })) end }
      operation { name = "closing", timeout = 1, run = function()
        local x <close> = setmetatable({}, { __close = forever })
        error("boom")
      end }
      operation { name = "caught", timeout = 1, run = function()
        error(setmetatable({}, { __tostring = function() while true do pcall(error, "again") end end }))
      end }
      operation { name = "after", after = { "error-object", "closing", "caught" }, when = "finished",
                  run = function() print("after ran") end }
      """, ["-k"], timeout: 60)
    #expect(run.status == 1, "\(run.stdout)\(run.stderr)")
    #expect(
      run.stderr.contains("FAILED    error-object")
        && run.stderr.contains("its __tostring failed: w.lua:1: stopped after 10 million instructions"), "\(run.stderr)"
    )
    #expect(run.stderr.contains("FAILED    closing") && run.stderr.contains("w.lua:5: boom"), "\(run.stderr)")
    #expect(run.stderr.contains("FAILED    caught"), "\(run.stderr)")
    #expect(run.stdout.contains("after ran"), "the run did not go on: \(run.stdout)")
  }

  /// An error object's __tostring decides the message when it gives a string; one that
  /// raises is named in the message; one that gives no string falls back as lua.c does.
  @Test(arguments: [
    ("error(setmetatable({}, { __tostring = function() return 'custom' end }))", "custom"),
    (
      "error(setmetatable({}, { __tostring = function() error('inner') end }))",
      "(error object is a table value; its __tostring failed: w.lua:1: inner)"
    ),
    ("error(setmetatable({}, { __tostring = function() return 5 end }))", "(error object is a table value)")
  ])
  func anErrorObjectBecomesItsMessage(_ body: String, _ message: String) throws {
    let run = try ScriptRun.run("operation { name = 'x', run = function() \(body) end }", timeout: 60)
    #expect(run.status == 1 && run.stderr.contains("FAILED    x (") && run.stderr.contains(message), "\(run.stderr)")
  }

  /// print raises what a value's __tostring raises, as lua5.4's print does (it used to print
  /// "(error object is a table value)" and go on); one that never ends is stopped.
  @Test func printRaisesWhatTostringRaises() throws {
    let run = try ScriptRun.run(
      """
      operation { name = "raising", run = function()
        print(setmetatable({}, { __tostring = function() error("boom") end }))
        print("went on")
      end }
      operation { name = "looping", run = function()
        print(setmetatable({}, { __tostring = function() while true do end end }))
      end }
      operation { name = "plain", run = function() print(1, nil, true, setmetatable({}, { __tostring = function() return "T" end })) end }
      """, ["-k"], timeout: 60)
    #expect(run.status == 1, "\(run.stdout)\(run.stderr)")
    #expect(run.stderr.contains("FAILED    raising") && run.stderr.contains("w.lua:2: boom"), "\(run.stderr)")
    #expect(!run.stdout.contains("went on") && !run.stdout.contains("error object"), "\(run.stdout)")
    #expect(
      run.stderr.contains("FAILED    looping") && run.stderr.contains("stopped after 10 million instructions"),
      "\(run.stderr)")
    #expect(run.stdout.contains("1\tnil\ttrue\tT"), "\(run.stdout)")
  }
}

/// User code run on a coroutine the body closes is watched like the body itself.
@Suite struct ClosedCoroutineTests {
  @Test func aLoopingCloseInACoroutineTheBodyClosesTimesOut() throws {
    let run = try ScriptRun.run(
      """
      operation { name = "closer", timeout = 1, run = function()
        local co = coroutine.create(function()
          local x <close> = setmetatable({}, { __close = function() while true do end end })
          coroutine.yield()
        end)
        coroutine.resume(co)
        coroutine.close(co)
      end }
      operation { name = "wrapped", timeout = 1, run = function()
        coroutine.wrap(function()
          local x <close> = setmetatable({}, { __close = function() while true do end end })
          error("inside")
        end)()
      end }
      operation { name = "after", after = { "closer", "wrapped" }, when = "finished", run = function()
        print(pcall(coroutine.close, coroutine.running()))
      end }
      """, ["-k"], timeout: 60)
    #expect(run.status == 1, "\(run.stdout)\(run.stderr)")
    #expect(run.stderr.contains("FAILED    closer") && run.stderr.contains("timed out after 1"), "\(run.stderr)")
    #expect(run.stderr.contains("FAILED    wrapped"), "\(run.stderr)")
    #expect(run.stdout.contains("false\tcannot close a running coroutine"), "\(run.stdout)")
  }

  /// A stop raised inside a coroutine the body resumed comes back from coroutine.resume as
  /// (false, "timed out"), like a pcall's; the body must not go on to succeed anyway.
  @Test func aTimeoutInsideAResumedCoroutineFailsTheBody() throws {
    let run = try ScriptRun.run(
      """
      operation { name = "resumer", timeout = 0.5, run = function()
        local co = coroutine.create(function() while true do end end)
        print(coroutine.resume(co))
      end }
      """, timeout: 60)
    #expect(
      run.status == 1 && run.stderr.contains("FAILED    resumer") && run.stderr.contains("timed out after 0.50 s"),
      "\(run.stdout)\(run.stderr)")
  }
}

/// The REPL shows results through the values' metamethods: bounded, and large tables cheaply.
@Suite struct ReplResultBoundTests {
  @Test func aResultWhoseTostringNeverEndsIsNotShownAndTheReplGoesOn() throws {
    let run = Binary.finish(
      try Binary.start(
        ["repl"],
        input: """
          setmetatable({}, { __tostring = function() while true do end end })
          big = {} for i = 1, 300000 do big["k" .. i] = i; big[i] = i end
          #big, big ~= nil
          big
          "after"
          """), timeout: 60)
    #expect(run.status == 0, "\(run.stdout)\(run.stderr)")
    #expect(run.stdout.contains("(cannot show the result: "), "\(run.stdout)")
    #expect(run.stdout.contains("300000\ttrue"), "\(run.stdout)")
    #expect(
      run.stdout.contains("{ 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, … }"),
      "\(run.stdout)")
    #expect(run.stdout.contains("after"), "\(run.stdout)")
  }
}

/// Callbacks the scheduler's loop calls (observers, progress handlers) are plain calls that
/// no body's watchdog covers: bounded, so one that never ends cannot hold the run.
@Suite struct CallbackBoundTests {
  @Test func anObserverThatNeverEndsIsStoppedAndTheRunGoesOn() throws {
    let run = try ScriptRun.run(
      """
      operation { name = "a", sh = "true", observers = { observer { on_finish = function(op, err)
        while true do end
      end } } }
      operation { name = "b", after = { "a" }, run = function() print("b ran") end }
      """, timeout: 120)
    #expect(run.status == 0, "\(run.stdout)\(run.stderr)")
    #expect(
      run.stderr.contains("observer on_finish of 'a' failed: w.lua:2: stopped after 1000 million instructions"),
      "\(run.stderr)")
    #expect(run.stdout.contains("b ran"), "\(run.stdout)")
  }
}

/// Lua runs finalizers with its hooks off, wherever a collection happens: a `__gc` set through
/// setmetatable runs bounded, so one that never ends cannot hold a body, the run or the exit.
@Suite struct FinalizerBoundTests {
  @Test func aFinalizerThatNeverEndsIsStopped() throws {
    let run = try ScriptRun.run(
      """
      local forever = function() while true do end end
      kept = setmetatable({}, { __gc = forever })  -- finalized when taskrun closes the state
      operation { name = "collector", timeout = 30, run = function()
        setmetatable({}, { __gc = forever })
        setmetatable({}, { __gc = function() print("finalized") end })
        collectgarbage()
        collectgarbage()
        print("collected")
      end }
      """, timeout: 90)
    #expect(run.status == 0, "\(run.stdout)\(run.stderr)")
    #expect(run.stdout.contains("finalized") && run.stdout.contains("collected"), "\(run.stdout)")
    #expect(run.stdout.contains("1 succeeded"), "\(run.stdout)")
  }

  @Test func setmetatableKeepsLuasErrors() throws {
    let run = try ScriptRun.run(
      """
      print(pcall(setmetatable, 1, {}))
      print(pcall(setmetatable, setmetatable({}, { __metatable = false }), {}))
      setmetatable({}, 5)
      """, timeout: 60)
    #expect(
      run.stdout.contains("false\tbad argument #1 to 'setmetatable' (table expected, got number)"), "\(run.stdout)")
    #expect(run.stdout.contains("false\tcannot change a protected metatable"), "\(run.stdout)")
    #expect(
      run.status == 2
        && run.stderr.contains("w.lua:3: bad argument #2 to 'setmetatable' (nil or table expected, got number)"),
      "\(run.stderr)")
  }
}
