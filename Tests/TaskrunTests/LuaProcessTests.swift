// os.execute, io.popen and io.read: Ctrl-C ends the run wherever Lua waits; output lands above the live view.
import Foundation
import TestSupport
import Testing

@Suite(.serialized) struct LuaProcessTests {
  static let hasTmux = TerminalTests.hasTmux

  func workflow(_ text: String) throws -> URL {
    let dir = Scratch.root.appendingPathComponent("taskrun-luaproc-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
    try text.write(to: dir.appendingPathComponent("w.lua"), atomically: true, encoding: .utf8)
    return dir
  }

  func leftovers(_ marker: String) -> Bool {
    (try? Child.output(["pgrep", "-f", marker]).status) == 0
  }

  /// Waits until the run's output holds `text`.
  func waitFor(_ text: String, in file: URL, timeout: Double = 10) {
    let deadline = Date().addingTimeInterval(timeout)
    while Date() < deadline {
      if ((try? String(contentsOf: file, encoding: .utf8)) ?? "").contains(text) { return }
      usleep(20_000)
    }
  }

  /// Runs w.lua in `dir` and sends SIGINT once its output holds `text` (and a moment more).
  func interrupted(_ dir: URL, once text: String) throws -> Run {
    let started = try Binary.start(["w.lua"], in: dir)
    waitFor(text, in: started.out)
    usleep(300_000)
    kill(started.child.pid, SIGINT)
    return Binary.finish(started, timeout: 15)
  }

  /// A body 'a' that prints "a started" and waits in os.execute for a marked sleep, and 'b'
  /// after it: the marker (to look for leftovers) and the folder.
  func bodyWaitingInOsExecute() throws -> (String, URL) {
    let marker = "taskrun-luaproc-\(UUID().uuidString)"
    let dir = try workflow(
      """
      operation { name = "a", run = function()
        print("a started")
        print("returned", os.execute("sleep 20 # \(marker)"))
      end }
      operation { name = "b", after = { "a" }, run = function() print("b ran") end }
      """)
    return (marker, dir)
  }

  @Test func osExecuteAndIoPopenKeepLuasResults() throws {
    let dir = try workflow(
      """
      print(os.execute("exit 3"))
      print(os.execute("kill -9 $$"))
      print(os.execute("true"))
      print(os.execute())
      local f = io.popen("echo a; echo b; exit 4")
      print(io.type(f), f:read("l"), f:read("a"))
      print(f:close())
      local w = io.popen("tr a-z A-Z", "w")
      w:write("lower\\n")
      print(w:close())
      for line in io.popen("seq 3"):lines() do io.write(line, " ") end
      print()
      print(io.close(io.popen("exit 2")))
      print(pcall(io.popen, "true", "rw"))
      """)
    let run = try Binary.run(["w.lua"], in: dir)
    #expect(run.status == 0, "\(run.stderr)")
    #expect(
      run.stdout.hasPrefix(
        """
        nil\texit\t3
        nil\tsignal\t9
        true\texit\t0
        true
        file\ta\tb\n
        nil\texit\t4
        LOWER
        true\texit\t0
        1 2 3 
        nil\texit\t2
        false\tbad argument #2 to 'io.popen' (invalid mode)
        """), "\(run.stdout)")
  }

  /// C's system() ignores SIGINT in the caller while the command runs: Ctrl-C was lost and
  /// the script went on.
  @Test func ctrlCDuringOsExecuteAtTheTopLevelEndsTheRun() throws {
    let marker = "taskrun-luaproc-\(UUID().uuidString)"
    let dir = try workflow(
      """
      print("before")
      print("returned", os.execute("sleep 20 # \(marker)"))
      print("after")
      operation { name = "later", run = function() print("later ran") end }
      """)
    let run = try interrupted(dir, once: "before")
    #expect(run.status == 130, "\(run.stdout)\(run.stderr)")
    #expect(
      !run.stdout.contains("returned") && !run.stdout.contains("after") && !run.stdout.contains("later ran"),
      "\(run.stdout)")
    #expect(run.stdout.contains("taskrun: interrupted"), "\(run.stdout)")
    #expect(!leftovers(marker), "the command outlived taskrun")
  }

  @Test func ctrlCDuringOsExecuteInABodyCancelsItAndWhatFollows() throws {
    let (marker, dir) = try bodyWaitingInOsExecute()
    let run = try interrupted(dir, once: "a started")
    #expect(run.status == 130, "\(run.stdout)\(run.stderr)")
    #expect(
      run.stdout.contains("cancelled a: interrupted") && run.stdout.contains("cancelled b: interrupted"),
      "\(run.stdout)")
    #expect(
      !run.stdout.contains("returned") && !run.stdout.contains("b ran") && !run.stdout.contains("ok "), "\(run.stdout)")
    #expect(!leftovers(marker), "the command outlived taskrun")
  }

  /// The operation's timeout ends the command it waits for, and the body stops there.
  @Test func aTimeoutEndsTheCommandOsExecuteWaitsFor() throws {
    let marker = "taskrun-luaproc-\(UUID().uuidString)"
    let dir = try workflow(
      """
      operation { name = "slow", timeout = 1, run = function()
        print("returned", os.execute("sleep 20 # \(marker)"))
      end }
      """)
    let run = Binary.finish(try Binary.start(["w.lua"], in: dir), timeout: 15)
    #expect(run.status == 1, "\(run.stdout)\(run.stderr)")
    #expect(
      run.stderr.contains("slow: timed out after 1 s") && !run.stdout.contains("returned"), "\(run.stdout)\(run.stderr)"
    )
    #expect(!leftovers(marker), "the command outlived its timeout")
  }

  /// os.execute blocked the one thread that runs Lua and the scheduler: with -j4 neither an
  /// independent sh operation nor another body started until its command had exited. It now
  /// waits by yielding, as sh() does; where Lua cannot yield (__tostring called by tostring,
  /// a C function) it still blocks, with the same results.
  @Test func osExecuteInABodyLetsOtherOperationsRun() throws {
    let dir = try workflow(
      """
      operation { name = "blocked", run = function()
        print("blocked started")
        print("execute", os.execute("sleep 3; exit 4"))
        local t = setmetatable({}, { __tostring = function() return table.concat({ tostring(os.execute("exit 5")) }, " ") .. " " .. select(3, os.execute("exit 5")) end })
        print("in tostring", tostring(t))
      end }
      operation { name = "quick", sh = "echo quick ran" }
      operation { name = "lua-quick", run = function() print("lua-quick ran") end }
      print("top", os.execute("exit 6"))
      """)
    let run = Binary.finish(try Binary.start(["-j4", "--progress", "plain", "w.lua"], in: dir), timeout: 30)
    #expect(run.status == 0, "\(run.stdout)\(run.stderr)")
    let out = run.stdout
    func at(_ text: String) -> String.Index? { out.range(of: text)?.lowerBound }
    // the others ran while its command did
    for other in ["ok        quick", "ok        lua-quick"] {
      #expect(at(other).map { a in at("execute\tnil\texit\t4").map { a < $0 } ?? false } ?? false, "\(other): \(out)")
    }
    let order = ["blocked started", "execute\tnil\texit\t4", "in tostring\tnil 5", "ok        blocked"].map(at)
    #expect(!order.contains(nil) && order.compactMap { $0 } == order.compactMap { $0 }.sorted(), "\(out)")
    #expect(out.hasPrefix("top\tnil\texit\t6"), "\(out)")
  }

  /// A timeout during an io.popen read ended the command, the read returned what had come,
  /// and the body returned it before the hook looked: `ok`, with the output cut short.
  @Test func aTimeoutDuringAnIoPopenReadTimesTheOperationOut() throws {
    let marker = "taskrun-luaproc-\(UUID().uuidString)"
    let dir = try workflow(
      """
      operation { name = "popen-read", timeout = 0.5, run = function()
        return io.popen("echo partial; sleep 20 # \(marker)"):read("a")
      end }
      operation { name = "use", after = "popen-read", run = function(op) print(("%q"):format(op.dependencies[1].result)) end }
      operation { name = "goes-on", after = "popen-read", when = "finished", timeout = 0.5, run = function()
        local got = io.popen("echo partial; sleep 20 # \(marker)"):read("a")
        print("read", #got)
      end }
      operation { name = "quick", timeout = 30, run = function() return io.popen("echo whole"):read("a") end }
      operation { name = "use-quick", after = "quick", run = function(op) print(("%q"):format(op.dependencies[1].result)) end }
      """)
    let run = Binary.finish(try Binary.start(["-k", "--progress", "plain", "-j1", "w.lua"], in: dir), timeout: 30)
    #expect(run.status == 1, "\(run.stdout)\(run.stderr)")
    let lines = (run.stdout + run.stderr).split(separator: "\n")
    for name in ["popen-read", "goes-on"] {
      #expect(
        lines.contains { $0.hasPrefix("FAILED    \(name) (") && $0.hasSuffix("timed out after 0.50 s") },
        "\(run.stdout)\(run.stderr)")
    }
    #expect(!run.stdout.contains("ok        popen-read") && !run.stdout.contains("ok        goes-on"), "\(run.stdout)")
    #expect(
      run.stdout.contains("skipped   use: dependency 'popen-read' failed") && !run.stdout.contains("\"partial"),
      "\(run.stdout)")
    // a body that ends well before its deadline is unaffected
    #expect(run.stdout.contains("ok        quick") && run.stdout.contains("\"whole\\\n\""), "\(run.stdout)")
    #expect(!leftovers(marker), "the command outlived its timeout")
  }

  /// Ctrl-C during an io.popen read in a body: the read returned early and the body ended
  /// `ok` (read "a"), or lines() raised EINTR's message and the body FAILED with it.
  @Test(arguments: [
    "return io.popen(\"sleep 20 # M\"):read(\"a\")",
    "for l in io.popen(\"sleep 20 # M; echo x\"):lines() do end"
  ])
  func ctrlCDuringAnIoPopenReadInABodyCancelsIt(read: String) throws {
    let marker = "taskrun-luaproc-\(UUID().uuidString)"
    let dir = try workflow(
      """
      operation { name = "p", run = function()
        print("p started")
        \(read.replacingOccurrences(of: "M", with: marker))
      end }
      operation { name = "q", after = "p", run = function() print("q ran") end }
      """)
    let run = try interrupted(dir, once: "p started")
    #expect(run.status == 130, "\(run.stdout)\(run.stderr)")
    #expect(
      run.stdout.contains("cancelled p: interrupted") && run.stdout.contains("cancelled q: interrupted"),
      "\(run.stdout)")
    #expect(
      !run.stdout.contains("ok ") && !run.stdout.contains("FAILED") && !run.stdout.contains("q ran"), "\(run.stdout)")
    #expect(
      !run.stdout.contains("Interrupted system call") && !run.stderr.contains("Interrupted system call"),
      "\(run.stdout)\(run.stderr)")
    #expect(!leftovers(marker), "the command outlived taskrun")
  }

  /// Lua blocked reading a pipe never saw the interrupt: after 1.5 s taskrun guessed at a
  /// finalizer and left.
  @Test func ctrlCWhileReadingAnIoPopenPipeEndsTheRunPromptly() throws {
    let marker = "taskrun-luaproc-\(UUID().uuidString)"
    let dir = try workflow(
      """
      local f = io.popen("echo first; sleep 20 # \(marker)")
      print(f:read("l"))
      print("second", f:read("l"))
      operation { name = "later", run = function() print("later ran") end }
      """)
    let run = try interrupted(dir, once: "first")
    #expect(run.status == 130, "\(run.stdout)\(run.stderr)")
    #expect(!run.stderr.contains("cannot be interrupted"), "no guess at a finalizer: \(run.stderr)")
    #expect(
      run.stdout.contains("taskrun: interrupted") && !run.stdout.contains("second")
        && !run.stdout.contains("later ran"), "\(run.stdout)")
    #expect(!leftovers(marker), "the command outlived taskrun")
  }

  @Test(.enabled(if: hasTmux)) func ctrlCAtAnIoReadOfTheTerminalEndsTheRun() throws {
    let dir = try workflow(
      """
      print("asking")
      local answer = io.read()
      print("answered", answer)
      operation { name = "later", run = function() print("later ran") end }
      """)
    let session = try TerminalSession("\(Binary.url.path) w.lua", in: dir)
    session.wait { $0.contains("asking") }
    usleep(300_000)
    try session.send("C-c")
    let done = session.wait { $0.contains("EXIT=") }
    #expect(done.contains("EXIT=130"), "\(done)")
    #expect(done.contains("taskrun: interrupted") && !done.contains("cannot be interrupted"), "\(done)")
    #expect(!done.contains("answered") && !done.contains("later ran"), "\(done)")
  }

  /// io.read() in a body fails with EINTR at Ctrl-C: the body returned nil and ended `ok`
  /// (io.lines raised "Interrupted system call" and FAILED).
  @Test(.enabled(if: hasTmux), arguments: ["return io.read()", "for l in io.lines() do end"])
  func ctrlCAtAnIoReadInABodyCancelsIt(read: String) throws {
    let dir = try workflow(
      """
      operation { name = "p", run = function()
        print("asking")
        \(read)
      end }
      """)
    let session = try TerminalSession("\(Binary.url.path) --progress plain w.lua", in: dir)
    session.wait { $0.contains("asking") }
    usleep(300_000)
    try session.send("C-c")
    let done = session.wait { $0.contains("EXIT=") }
    #expect(done.contains("EXIT=130"), "\(done)")
    #expect(done.contains("cancelled p: interrupted") && !done.contains("ok ") && !done.contains("FAILED"), "\(done)")
    #expect(!done.contains("Interrupted system call"), "\(done)")
  }

  /// A read of an io.popen pipe blocks the thread that runs Lua and the scheduler: the live
  /// view froze, and a print just before the read appeared only once it returned. The read
  /// waits in steps now, drawing the view between them. The command waits for a file the test
  /// creates once it has seen both, so the read cannot have returned before.
  @Test(.enabled(if: hasTmux)) func theLiveViewDrawsWhileAnIoPopenReadWaits() throws {
    let dir = try workflow(
      """
      operation { name = "reader", run = function()
        print("before read")
        local got = io.popen("while [ ! -e go ]; do sleep 0.05; done; echo done"):read("a")
        print("read " .. got)
      end }
      """)
    let session = try TerminalSession("\(Binary.url.path) w.lua", in: dir)
    let seen = session.wait { $0.contains("before read") && $0.contains("0:02 elapsed") }
    #expect(seen.contains("before read") && seen.contains("0:02 elapsed") && !seen.contains("read done"), "\(seen)")
    _ = FileManager.default.createFile(atPath: dir.appendingPathComponent("go").path, contents: nil)
    let done = session.wait { $0.contains("EXIT=") }
    #expect(done.contains("EXIT=0") && done.contains("read done"), "\(done)")
  }

  @Test(.enabled(if: hasTmux)) func ctrlCAtOsExecuteOnATerminalEndsTheRun() throws {
    let (marker, dir) = try bodyWaitingInOsExecute()
    let session = try TerminalSession("\(Binary.url.path) w.lua", in: dir)
    session.wait { $0.contains("a started") }
    usleep(300_000)
    try session.send("C-c")
    let done = session.wait { $0.contains("EXIT=") }
    #expect(done.contains("EXIT=130"), "\(done)")
    #expect(!done.contains("returned") && !done.contains("b ran"), "\(done)")
    #expect(!leftovers(marker), "the command outlived taskrun")
  }

  /// Under the live view, what Lua writes to standard error and what os.execute and io.popen
  /// commands print went straight to the terminal, and the next frame drew over it.
  @Test(.enabled(if: hasTmux)) func standardErrorAndCommandsOutputLandAboveTheLiveView() throws {
    let dir = try workflow(
      """
      operation { name = "noisy", run = function()
        for i = 1, 12 do io.stderr:write("stderr line ", i, "\\n") sleep(0.1) end
      end }
      operation { name = "shell", run = function()
        sleep(0.3)
        os.execute("for i in 1 2 3 4 5 6; do echo executed out $i; echo executed err $i >&2; sleep 0.1; done")
        local f = io.popen("echo popen read; echo popen err >&2")
        local read = f:read("a")
        f:close()
        print("read: " .. read:gsub("\\n", ""))
        local w = io.popen("cat", "w")
        w:write("through cat\\n")
        w:close()
      end }
      operation { name = "slow", run = function() sleep(2.5) end }
      """)
    let session = try TerminalSession("\(Binary.url.path) -j3 w.lua", in: dir, width: 100, height: 50)
    let done = session.wait(timeout: 20) { $0.contains("EXIT=") }
    #expect(done.contains("EXIT=0"), "\(done)")
    for i in 1...12 { #expect(done.contains("stderr line \(i)\n"), "stderr line \(i) kept:\n\(done)") }
    for i in 1...6 {
      #expect(done.contains("executed out \(i)\n") && done.contains("executed err \(i)\n"), "line \(i) kept:\n\(done)")
    }
    #expect(
      done.contains("read: popen read") && done.contains("popen err\n") && done.contains("through cat\n"), "\(done)")
  }

  /// An io.popen command's standard error under the live view is held until its handle
  /// closes, at most 64 KiB of it: past that, one line says how much was not shown.
  @Test(.enabled(if: hasTmux)) func aChattyIoPopenCommandsStandardErrorIsBounded() throws {
    let dir = try workflow(
      """
      operation { name = "chatty", run = function()
        local f = io.popen("head -c 300000 /dev/zero | tr '\\\\0' x >&2; echo first; echo last >&2")
        local out = f:read("a")
        f:close()
        print("read: " .. out:gsub("\\n", ""))
      end }
      """)
    let session = try TerminalSession("\(Binary.url.path) w.lua", in: dir, width: 100, height: 50)
    let done = session.wait(timeout: 30) { $0.contains("EXIT=") }
    #expect(done.contains("EXIT=0"), "\(done)")
    #expect(done.contains("read: first"), "\(done)")
    #expect(done.contains("more bytes of this io.popen command's standard error not shown"), "\(done)")
  }

  /// Code taskrun calls outside a body (an error object's __tostring) that waits on a command
  /// is bounded in time as it is in instructions: 1 s, then the command is ended.
  @Test func aCommandWaitedForOutsideABodyIsBoundedInTime() throws {
    let marker = "taskrun-luaproc-\(UUID().uuidString)"
    let dir = try workflow(
      """
      operation { name = "e", run = function()
        error(setmetatable({}, { __tostring = function() os.execute("sleep 30 # \(marker)") return "slow" end }))
      end }
      """)
    let sent = Date()
    let run = Binary.finish(try Binary.start(["--progress", "plain", "w.lua"], in: dir), timeout: 60)
    #expect(run.status == 1, "\(run.stdout)\(run.stderr)")
    #expect(
      run.stderr.contains(
        "w.lua:2: stopped after 1 s waiting for a command in an error object's __tostring (taskrun bounds the Lua code it calls itself)"
      ),
      "\(run.stderr)")
    #expect(Date().timeIntervalSince(sent) < 20, "the wait was not bounded")
    #expect(!leftovers(marker), "the command outlived its bound")
  }
}
