// Processes: taskrun signals only what it owns, and nothing it started outlives it.
import Foundation
import TestSupport
import Testing

/// A folder with `w.lua`, and a marker that every process of the run carries in its
/// environment (`TASKRUN_TEST_MARK`), so leftovers can be found without naming programs.
struct MarkedWorkflow {
  let dir: URL
  let mark = "mark-\(UUID().uuidString)"

  init(_ script: (String) -> String) throws {
    dir = Scratch.root.appendingPathComponent("taskrun-own-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
    try script("env = { TASKRUN_TEST_MARK = \"\(mark)\" }")
      .write(to: dir.appendingPathComponent("w.lua"), atomically: true, encoding: .utf8)
  }

  /// Pids of live processes (zombies excluded) whose environment carries the marker.
  func survivors() -> [pid_t] {
    let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
    return entries.compactMap { pid_t($0) }.filter { pid in
      guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
        let state = stat.split(separator: ")").last?.split(separator: " ").first, state != "Z",
        let environ = FileManager.default.contents(atPath: "/proc/\(pid)/environ")
      else { return false }
      return String(decoding: environ, as: UTF8.self).contains("TASKRUN_TEST_MARK=\(mark)")
    }
  }

  /// Waits up to `seconds` for the marked processes to be gone; returns those left.
  func survivors(after seconds: Double) -> [pid_t] {
    let deadline = Date().addingTimeInterval(seconds)
    var left = survivors()
    while !left.isEmpty && Date() < deadline { usleep(20_000); left = survivors() }
    for pid in left { kill(pid, SIGKILL) }  // never leave them to the next test
    return left
  }

  func events() -> [[String: Any]] { Events.read(dir.appendingPathComponent("events.jsonl")) }

  func start(_ arguments: [String] = []) throws -> Binary.Started {
    try Binary.start(["--progress", "plain", "--events", "events.jsonl"] + arguments + ["w.lua"], in: dir)
  }
}

enum Events {
  static func read(_ file: URL) -> [[String: Any]] {
    let text = (try? String(contentsOf: file, encoding: .utf8)) ?? ""
    return text.split(separator: "\n").compactMap {
      try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
    }
  }

  /// Waits until the events file shows `count` op_start events (the run is under way).
  static func waitForStarts(_ file: URL, count: Int = 1, timeout: Double = 10) {
    let deadline = Date().addingTimeInterval(timeout)
    while Date() < deadline {
      if read(file).filter({ $0["event"] as? String == "op_start" }).count >= count { return }
      usleep(10_000)
    }
  }
}

@Suite(.serialized) struct OwnershipTests {
  static let hasStrace = FileManager.default.isExecutableFile(atPath: "/usr/bin/strace")

  @Test(.enabled(if: hasStrace)) func aReapedCommandsProcessGroupIsNeverSignalled() throws {
    let w = try MarkedWorkflow { env in
      """
      operation { name = "a", \(env), sh = { "sh", "-c", "echo $$ > child.pid" } }
      operation { name = "b", \(env), after = { "a" }, sh = "sleep 1.5" }
      operation { name = "c", \(env), after = { "b" }, sh = "sleep 5", timeout = 0.2 }
      """
    }
    let trace = w.dir.appendingPathComponent("kill.trace")
    let started = try Binary.start(
      [
        "-f", "-e", "trace=kill", "-o", trace.path, Binary.url.path,
        "--progress", "plain", "w.lua"
      ], in: w.dir, program: "/usr/bin/strace")
    let run = Binary.finish(started, timeout: 30)
    #expect(run.status == 1, "\(run.stdout)\(run.stderr)")  // c times out: its own group is signalled
    let pid = try String(contentsOf: w.dir.appendingPathComponent("child.pid"), encoding: .utf8)
      .trimmingCharacters(in: .whitespacesAndNewlines)
    let kills = try String(contentsOf: trace, encoding: .utf8).split(separator: "\n").filter { $0.contains("kill(") }
    #expect(!kills.isEmpty, "the timeout of 'c' should have signalled its group")
    #expect(
      !kills.contains { $0.contains("kill(-\(pid),") || $0.contains("kill(\(pid),") },
      "signalled the reaped command \(pid): \(kills)")
  }

  @Test(arguments: [
    "setsid sleep 30 & echo started",  // left its process group and session
    "sh -c '(sleep 30 &) ; true'",  // a double fork: reparented at once
    "nohup sleep 30 >/dev/null 2>&1 &"  // daemon-style, output elsewhere
  ])
  func whatACommandLeavesBehindEndsWithTheRun(_ command: String) throws {
    let w = try MarkedWorkflow { env in
      """
      operation { name = "leaver", \(env), sh = [[\(command)]] }
      operation { name = "later", after = { "leaver" }, run = function() sleep(0.3) end }
      """
    }
    let run = Binary.finish(try w.start(), timeout: 20)
    #expect(run.status == 0, "\(run.stdout)\(run.stderr)")
    #expect(w.survivors(after: 0.5).isEmpty, "a process of the run outlived taskrun")
  }

  @Test func anOperationEndsWhenItsCommandExitsEvenIfABackgroundChildHoldsItsOutput() throws {
    let w = try MarkedWorkflow { env in #"operation { name = "bg", \#(env), sh = "sleep 7 & echo started" }"# }
    let begun = Date()
    let run = Binary.finish(try w.start(), timeout: 20)
    #expect(run.status == 0 && run.stdout.contains("ok        bg"), "\(run.stdout)\(run.stderr)")
    #expect(Date().timeIntervalSince(begun) < 3, "the background child held the operation")
    let output = w.events().filter { $0["event"] as? String == "output" }.compactMap { $0["text"] as? String }
    #expect(output.joined() == "started\n")
    #expect(w.survivors(after: 0.5).isEmpty)
  }

  /// Commands start with every signal at its default and none blocked, whatever taskrun
  /// inherited or set itself: here it starts with SIGQUIT, SIGUSR1 and a real-time signal
  /// ignored (a shell's `trap ''`), and ignores SIGPIPE and handles SIGINT on its own. A
  /// command, and one started after a Lua body ran `os.execute` (glibc's `system` ignores
  /// SIGINT and SIGQUIT while it waits), show none ignored.
  @Test func commandsStartWithEverySignalAtItsDefault() throws {
    let w = try MarkedWorkflow { _ in
      """
      local show = { "grep", "-E", "^Sig(Ign|Blk)", "/proc/self/status" }
      local first = operation { name = "first", sh = show }
      operation { name = "execute", after = { first }, run = function() os.execute("true") end }
      local second = operation { name = "second", after = { "execute" }, sh = show }
      operation { name = "report", after = { second }, run = function()
        for _, op in ipairs { first, second } do
          for line in op.result.stdout:gmatch("[^\\n]+") do print(op.name .. " " .. line) end
        end
      end }
      """
    }
    let started = try Binary.start(
      ["-c", "trap '' QUIT USR1 36; exec \"$0\" --progress plain w.lua", Binary.url.path],
      in: w.dir, program: "/bin/sh")
    expectEmptyMasks(Binary.finish(started, timeout: 30), named: "Sig", count: 4)
  }

  /// A command gets the descriptors taskrun was started with (here 7: a jobserver's pipe,
  /// `3>log`) and none that taskrun or Lua opened: a script `io.open` was writing while a
  /// long command started still runs afterwards (it failed with ETXTBSY while that command
  /// held it open for writing).
  @Test func commandsGetWhatTaskrunWasGivenAndNothingLuaOpened() throws {
    let w = try MarkedWorkflow { env in
      """
      local held = assert(io.open("held.txt", "w"))
      operation { name = "fds", \(env), sh = "ls -l /proc/$$/fd" }
      local gen = operation { name = "gen", run = function()
        local f = assert(io.open("gen.sh", "w"))
        f:write("#!/bin/sh\\necho generated ran\\n")
        sleep(0.3)
        f:close()
      end }
      operation { name = "long", \(env), sh = "sleep 1.5" }
      operation { name = "use", \(env), after = { gen }, sh = "chmod +x gen.sh && ./gen.sh" }
      """
    }
    let started = try Binary.start(
      ["-c", "exec 7</dev/null; exec \"$0\" --progress plain -v w.lua", Binary.url.path],
      in: w.dir, program: "/bin/sh")
    let run = Binary.finish(started, timeout: 30)
    #expect(run.status == 0 && run.stdout.contains("[use] generated ran"), "\(run.stdout)\(run.stderr)")
    let listed = run.stdout.split(separator: "\n").filter { $0.hasPrefix("[fds] ") && $0.contains(" -> ") }
    #expect(listed.contains { $0.contains(" 7 -> /dev/null") }, "what taskrun was given: \(listed)")
    #expect(!listed.contains { $0.contains("held.txt") }, "what Lua opened: \(listed)")
  }

  /// Lua: `procList(what)` is taskrun's pid and the names in `/proc/<pid>/<what>`, listed by
  /// an `ls` that taskrun waits for, into a file: io.popen's pipe would be counted or not, as
  /// the listing raced glibc closing the child's end.
  static let procListing = """
    local function procList(what)
      local stat = io.open("/proc/self/stat")
      local pid = stat:read("n")
      stat:close()
      assert(os.execute("ls /proc/" .. pid .. "/" .. what .. " > " .. what .. ".txt"))
      local names = {}
      for name in io.lines(what .. ".txt") do names[#names + 1] = name end
      return pid, names
    end
    """

  /// A command's pipes, its pidfd and taskrun's copies of the pipes' write ends (held until
  /// its exit is seen) are closed when it ends: after 60 commands, half of them writing to
  /// both streams, taskrun holds as many descriptors as it did after one.
  @Test func anEndedCommandLeavesNoDescriptorOpen() throws {
    let w = try MarkedWorkflow { env in
      """
      \(Self.procListing)
      local function descriptors() local _, fds = procList("fd") return #fds end
      local before
      operation { name = "one", \(env), sh = "true" }
      operation { name = "before", after = { "one" }, run = function() before = descriptors() end }
      local all = {}
      for i = 1, 60 do
        all[i] = operation { name = "c" .. i, \(env), after = { "before" },
                             sh = i % 2 == 0 and "echo out; echo err >&2" or "true" }
      end
      operation { name = "after", after = all, run = function()
        print("descriptors " .. before .. " " .. descriptors())
      end }
      """
    }
    let run = Binary.finish(try w.start(["-j4"]), timeout: 30)
    #expect(run.status == 0, "\(run.stdout)\(run.stderr)")
    let line = run.stdout.split(separator: "\n").first { $0.contains("descriptors ") }
    let counts = line.map { $0.split(separator: " ").suffix(2).compactMap { Int($0) } } ?? []
    #expect(counts.count == 2 && counts[0] == counts[1], "\(run.stdout)")
  }

  /// taskrun blocks none of its signals on the thread where Lua runs, so what Lua's own
  /// `os.execute` and `io.popen` start inherits no blocked signal whatever `/bin/sh` does
  /// with it (commands get a clean mask from cs_spawn anyway): a program that waits for
  /// SIGCHLD (libuv, a shell's job control) would hang with it blocked.
  @Test func theThreadWhereLuaRunsHasNoSignalBlocked() throws {
    let w = try MarkedWorkflow { _ in
      """
      local function blocked(where)
        for line in io.lines("/proc/self/status") do
          if line:find("^SigBlk:") then print(where .. " " .. line) end
        end
      end
      blocked("top")
      operation { name = "body", run = function() blocked("body") end }
      operation { name = "cmd", sh = "true" }
      operation { name = "after", after = { "cmd" }, run = function() blocked("after") end }
      """
    }
    expectEmptyMasks(Binary.finish(try w.start(["-j2"]), timeout: 30), named: "SigBlk:", count: 3)
  }

  /// `run` succeeded and printed `count` lines of signal masks from /proc (`SigBlk:`, `SigIgn:`)
  /// holding `named`, each of them empty.
  func expectEmptyMasks(_ run: Run, named: String, count: Int) {
    #expect(run.status == 0, "\(run.stdout)\(run.stderr)")
    let masks = run.stdout.split(separator: "\n").filter { $0.contains(named) }
    #expect(masks.count == count, "\(run.stdout)")
    #expect(masks.allSatisfy { $0.hasSuffix(":\t0000000000000000") }, "\(masks)")
  }

  /// A command's exit wakes no thread of taskrun's but the one that reaps it: SIGCHLD is
  /// never blocked, so the kernel drops it where it is sent. (Blocked while a command was
  /// spawned, it was pending for the whole process and woke the signal watcher and any other
  /// thread that did not block it: about one exit in eight, each a context switch.)
  @Test func aCommandsExitWakesNoOtherThread() throws {
    let w = try MarkedWorkflow { env in
      """
      \(Self.procListing)
      local function otherThreadsWoken()
        local pid, tids = procList("task")
        local n = 0
        for _, tid in ipairs(tids) do
          if tonumber(tid) ~= pid then
            for line in io.lines("/proc/" .. pid .. "/task/" .. tid .. "/status") do
              n = n + (tonumber(line:match("^voluntary_ctxt_switches:%s*(%d+)")) or 0)
            end
          end
        end
        return n
      end
      local before
      operation { name = "before", run = function() before = otherThreadsWoken() end }
      local all = {}
      for i = 1, 400 do all[i] = operation { name = "c" .. i, \(env), after = { "before" }, sh = "true" } end
      operation { name = "after", after = all, run = function()
        print("woken " .. otherThreadsWoken() - before)
      end }
      """
    }
    let run = Binary.finish(try w.start(["-j2"]), timeout: 60)
    #expect(run.status == 0, "\(run.stdout)\(run.stderr)")
    let line = run.stdout.split(separator: "\n").first { $0.contains("woken ") }
    let woken = line.flatMap { $0.split(separator: " ").last.flatMap { Int($0) } }
    #expect(woken != nil && woken! <= 8, "\(run.stdout)")
  }

  @Test func runningCommandsDieWhenTaskrunIsKilled() throws {
    let w = try MarkedWorkflow { env in
      """
      operation { name = "a", \(env), sh = "sleep 30" }
      operation { name = "b", \(env), sh = { "sleep", "31" } }
      """
    }
    let started = try w.start(["-j2"])
    Events.waitForStarts(w.dir.appendingPathComponent("events.jsonl"), count: 2)
    usleep(100_000)
    #expect(w.survivors().count == 2)
    kill(started.child.pid, SIGKILL)
    _ = Binary.finish(started, timeout: 5)
    #expect(w.survivors(after: 2).isEmpty, "commands outlived a killed taskrun")
  }

  @Test(arguments: ["body", "top"])
  func osExitEndsTheRunReportsItAndExitsWithItsCode(_ place: String) throws {
    let w = try MarkedWorkflow { env in
      place == "body"
        ? """
        operation { name = "long", \(env), sh = "sleep 30" }
        operation { name = "quit", run = function() sleep(0.3) os.exit(3) end }
        """
        : """
        operation { name = "nap", run = function() sleep(30) end }
        sh("sleep 30 & true", { \(env) })
        pcall(os.exit, 3)
        io.open("went-on", "w"):close()
        """
    }
    let begun = Date()
    let started = try w.start(["-j4"])
    let run = Binary.finish(started, timeout: 20)
    #expect(run.status == 3, "\(run.stdout)\(run.stderr)")
    #expect(Date().timeIntervalSince(begun) < 5)
    let events = w.events()
    #expect(events.filter { $0["event"] as? String == "run_finish" }.count == 1, "\(events)")
    #expect(events.last?["interrupted"] as? Bool == false)
    #expect(!FileManager.default.fileExists(atPath: w.dir.appendingPathComponent("went-on").path))
    #expect(w.survivors(after: 0.5).isEmpty)
  }
}
