// WatchTests: `taskrun -w` and `service = true` through the binary, with real file changes and a real loopback listener.
import Foundation
import TestSupport
import Testing

@Suite struct WatchTests {
  /// A watched run under way: its output so far, read again at each look.
  struct Watching {
    let started: Binary.Started
    let dir: URL

    var output: String { (try? String(contentsOf: started.out, encoding: .utf8)) ?? "" }
    var errors: String { (try? String(contentsOf: started.err, encoding: .utf8)) ?? "" }

    /// Waits (up to a minute: the suite runs in parallel on two cores) until `text` appears
    /// `times` times in standard output.
    func waitFor(_ text: String, times: Int = 1, _ comment: Comment? = nil) throws {
      let deadline = Date().addingTimeInterval(60)
      while output.components(separatedBy: text).count - 1 < times {
        guard Date() < deadline else {
          Issue.record("'\(text)' ×\(times) never came; output:\n\(output)\nerrors:\n\(errors)")
          throw CancellationError()
        }
        usleep(20_000)
      }
    }

    /// The lines of cycle `n` (from its line to the next "watching" line) in `text` (default:
    /// the output so far; after `interrupt`, give its output: the file is gone).
    func cycle(_ n: Int, in text: String? = nil) -> String {
      let text = text ?? output
      let start = n == 1 ? text.startIndex : text.range(of: "taskrun: cycle \(n):")?.lowerBound ?? text.endIndex
      let rest = text[start...]
      let end = rest.range(of: "taskrun: watching")?.lowerBound ?? rest.endIndex
      return String(rest[..<end])
    }

    /// Ctrl-C: the exit code and everything it printed.
    func interrupt() -> Run {
      kill(started.child.pid, SIGINT)
      return Binary.finish(started, timeout: 30)
    }

    func write(_ text: String, _ name: String) throws {
      let url = dir.appendingPathComponent(name)
      try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
      try text.write(to: url, atomically: false, encoding: .utf8)
    }
  }

  func watch(_ script: String, _ files: [String: String] = [:], _ arguments: [String] = []) throws -> Watching {
    let dir = try Scratch.folder(
      "watch", files.filter { !$0.key.contains("/") }.merging(["taskrun.lua": script]) { a, _ in a })
    for name in files.keys where name.contains("/") {
      let url = dir.appendingPathComponent(name)
      try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
      try files[name]!.write(to: url, atomically: false, encoding: .utf8)
    }
    let started = try Binary.start(["-w", "--progress", "plain"] + arguments, in: dir)
    return Watching(started: started, dir: dir)
  }

  static let graph = """
    operation { name = "a", sh = "cat src/a.txt > a.out", inputs = { "src/a.txt" }, outputs = { "a.out" } }
    operation { name = "b", sh = "cat src/*.txt > b.out", inputs = { "src/*.txt" }, outputs = { "b.out" } }
    operation { name = "after_a", sh = "echo after", after = { "a" } }
    operation { name = "alone", sh = "echo alone" }
    """

  @Test func aChangeRerunsExactlyWhatItMadeOutOfDate() throws {
    let w = try watch(Self.graph, ["src/a.txt": "1\n", "src/b.txt": "2\n"], ["--events", "events.jsonl"])
    try w.waitFor("taskrun: watching")
    // Saved as an editor that writes a new file and renames it over the old one.
    try "1 changed\n".write(to: w.dir.appendingPathComponent("src/.a.txt.swp"), atomically: false, encoding: .utf8)
    rename(w.dir.appendingPathComponent("src/.a.txt.swp").path, w.dir.appendingPathComponent("src/a.txt").path)
    try w.waitFor("taskrun: watching", times: 2)
    let second = w.cycle(2)
    #expect(second.contains("cycle 2: src/a.txt changed"))
    #expect(second.contains("ok        a ("), "its input changed: \(second)")
    #expect(second.contains("ok        b ("), "its glob matches a.txt too: \(second)")
    #expect(second.contains("ok        after_a (") && second.contains("a ran again"), "\(second)")
    #expect(second.contains("fresh     alone — not affected by the change"), "\(second)")
    // A new file that the glob matches: only b.
    try w.write("3\n", "src/c.txt")
    try w.waitFor("taskrun: watching", times: 3)
    let third = w.cycle(3)
    #expect(third.contains("ok        b (") && third.contains("input src/c.txt added"), "\(third)")
    #expect(third.contains("fresh     a —") && third.contains("fresh     alone"), "\(third)")
    #expect(!third.contains("ok        after_a"), "\(third)")
    // Written but not changed: a cycle finds everything up to date and runs nothing.
    let run = w.interrupt()
    #expect(run.status == 130, "\(run.stdout)\(run.stderr)")
    let events = try String(contentsOf: w.dir.appendingPathComponent("events.jsonl"), encoding: .utf8)
    let lines = events.split(separator: "\n").compactMap {
      try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
    }
    let cycles = lines.filter { $0["event"] as? String == "watch_cycle" }.compactMap { $0["cycle"] as? Int }
    #expect(cycles == [1, 2, 3], "\(events)")
    let finishes = lines.filter { $0["event"] as? String == "op_finish" }
    #expect(finishes.allSatisfy { $0["cycle"] != nil }, "every event carries its cycle")
    #expect(finishes.filter { $0["cycle"] as? Int == 3 && $0["outcome"] as? String == "succeeded" }.count == 1)
    if let python = EventSchemaTests.python {  // the published schema holds for cycles too
      let check = Binary.finish(
        try Binary.start(
          [Binary.packageRoot.appendingPathComponent("scripts/check-events").path, "events.jsonl"], in: w.dir,
          program: python), timeout: 60)
      #expect(check.status == 0, "\(check.stdout)\(check.stderr)")
    }
  }

  @Test func aBurstOfChangesMakesOneCycle() throws {
    let w = try watch(Self.graph, ["src/a.txt": "1\n"], ["--debounce", "400", "--events", "events.jsonl"])
    try w.waitFor("taskrun: watching")
    for i in 0..<30 { try w.write("\(i)\n", "src/a.txt") }
    try w.waitFor("taskrun: watching", times: 2)
    usleep(1_500_000)  // well past the debounce: no further cycle comes
    let run = w.interrupt()
    #expect(run.stdout.components(separatedBy: "taskrun: cycle ").count - 1 == 1, "\(run.stdout)")
    // The paths a cycle names are in the events (once seen under load: "and 1 more").
    let events = (try? String(contentsOf: w.dir.appendingPathComponent("events.jsonl"), encoding: .utf8)) ?? ""
    let cycles = events.split(separator: "\n").filter { $0.contains(#""watch_cycle""#) }
    #expect(run.stdout.contains("cycle 2: src/a.txt changed"), "\(cycles)")
  }

  @Test func aChangeDuringACycleStopsWhatItConcernsAndMakesOneMore() throws {
    let w = try watch(
      """
      operation { name = "slow", sh = "s=$(cat src/s.txt); touch started; sleep $s", inputs = { "src/s.txt" } }
      operation { name = "other", sh = "sleep 1" }
      """, ["src/s.txt": "60\n"])
    let started = w.dir.appendingPathComponent("started")
    let deadline = Date().addingTimeInterval(60)
    while !FileManager.default.fileExists(atPath: started.path) && Date() < deadline { usleep(20_000) }
    try w.write("0\n", "src/s.txt")
    try w.waitFor("cycle 2:")
    try w.waitFor("taskrun: watching")  // the first cycle ended without waiting: the change came during it
    let run = w.interrupt()
    #expect(
      run.stdout.contains("changed during cycle 1: src/s.txt; one more cycle follows (stopped slow)"), "\(run.stdout)")
    #expect(run.stdout.contains("cancelled slow: its input src/s.txt changed"), "\(run.stdout)")
    #expect(w.cycle(2, in: run.stdout).contains("ok        slow ("), "\(run.stdout)")
    #expect(
      w.cycle(2, in: run.stdout).contains("fresh     other"), "other was not stopped, and ran in cycle 1: \(run.stdout)"
    )
  }

  @Test func aFolderRemovedAndMadeAgainIsStillWatched() throws {
    let w = try watch(
      #"operation { name = "list", sh = "ls src > list.out", inputs = { "src/**/*.c" }, outputs = { "list.out" } }"#,
      ["src/deep/x.c": "x\n"])
    try w.waitFor("taskrun: watching")
    try FileManager.default.removeItem(at: w.dir.appendingPathComponent("src"))
    try w.waitFor("taskrun: watching", times: 2)
    try w.write("y\n", "src/deep/y.c")
    try w.waitFor("taskrun: watching", times: 3)
    try w.write("z\n", "src/deep/new/z.c")  // a folder made below the root is watched at once
    try w.waitFor("taskrun: watching", times: 4)
    let run = w.interrupt()
    #expect(w.cycle(2, in: run.stdout).contains("1 failed"), "ls of a missing folder fails: \(run.stdout)")
    #expect(w.cycle(3, in: run.stdout).contains("src/deep/y.c"), "\(run.stdout)")
    #expect(w.cycle(4, in: run.stdout).contains("src/deep/new/z.c"), "\(run.stdout)")
  }

  @Test func theScriptAndItsLuaFilesReloadTheGraphAndABrokenScriptWaitsForAFix() throws {
    let w = try watch(
      """
      local words = require("words")
      operation { name = "say", sh = "echo " .. words.word }
      operation { name = "fixed", sh = "echo fixed", inputs = { "taskrun.lua" } }
      """, ["words.lua": "return { word = 'one' }\n"])
    try w.waitFor("taskrun: watching")
    try w.write("return { word = 'two' }\n", "words.lua")
    try w.waitFor("taskrun: watching", times: 2)
    #expect(w.cycle(2).contains("cycle 2: words.lua changed"))
    #expect(w.cycle(2).contains("ok        say (") && w.cycle(2).contains("what it runs changed"), "\(w.output)")
    let script = try String(contentsOf: w.dir.appendingPathComponent("taskrun.lua"), encoding: .utf8)
    try w.write(script + "\nthis is not lua\n", "taskrun.lua")
    try w.waitFor("taskrun: watching", times: 3)
    try w.write(script + "\n-- mended\n", "taskrun.lua")
    try w.waitFor("taskrun: watching", times: 4)
    let run = w.interrupt()
    #expect(run.stderr.contains("taskrun.lua:"), "the syntax error is said: \(run.stderr)")
    #expect(w.cycle(4, in: run.stdout).contains("fresh     say"), "\(run.stdout)")
    #expect(w.cycle(4, in: run.stdout).contains("ok        fixed ("), "\(run.stdout)")
  }

  @Test func luaBodiesRerunWhenTheirCodeChangesAndKeepTheirResultsOtherwise() throws {
    let script = """
      local n = operation { name = "number", run = function() return 41 end }
      operation { name = "edited", run = function() print("version 1") end }
      operation { name = "use", after = { n }, inputs = { "in.txt" },
        run = function() print("got " .. tostring(n.result + 1)) end }
      """
    let w = try watch(script, ["in.txt": "1"])
    try w.waitFor("taskrun: watching")
    try w.write(script.replacingOccurrences(of: "version 1", with: "version 2"), "taskrun.lua")
    try w.waitFor("taskrun: watching", times: 2)
    try w.write("2", "in.txt")
    try w.waitFor("taskrun: watching", times: 3)
    let run = w.interrupt()
    let second = w.cycle(2, in: run.stdout), third = w.cycle(3, in: run.stdout)
    #expect(second.contains("version 2") && second.contains("what it runs changed"), "\(run.stdout)")
    #expect(second.contains("fresh     number — not affected by the change"), "\(run.stdout)")
    #expect(third.contains("got 42"), "the kept result reaches the dependent: \(run.stdout)")
    #expect(third.contains("fresh     edited"), "\(run.stdout)")
  }

  @Test func anOperationThatWritesItsOwnInputDoesNotLoopForever() throws {
    let w = try watch(
      #"operation { name = "self", inputs = { "data.txt" }, sh = "date >> data.txt" }"#, ["data.txt": "x\n"])
    try w.waitFor("does an operation write an input of its own?")
    usleep(1_500_000)
    let run = w.interrupt()
    // Cycle 1, then the two it started itself, then none.
    #expect(run.stdout.components(separatedBy: "taskrun: cycle ").count - 1 == 2, "\(run.stdout)")
  }

  @Test func whatACycleLeftRunningEndsWithItAndLinkedInputsAreWatched() throws {
    let w = try watch(
      """
      operation { name = "stray", inputs = { "link.txt" }, sh = "sleep 100 > /dev/null 2>&1 & echo $! > stray.pid" }
      """, ["real/target.txt": "1"])
    symlink("real/target.txt", w.dir.appendingPathComponent("link.txt").path)
    try w.waitFor("taskrun: watching")
    let pid = Int32(
      ((try? String(contentsOf: w.dir.appendingPathComponent("stray.pid"), encoding: .utf8)) ?? "")
        .trimmingCharacters(in: .whitespacesAndNewlines))
    #expect(pid != nil && kill(pid!, 0) != 0, "the background child of cycle 1 was ended with it")
    try w.write("2", "real/target.txt")  // the link's target, not the link
    try w.waitFor("taskrun: watching", times: 2)
    let run = w.interrupt()
    #expect(run.stdout.contains("cycle 2: real/target.txt changed"), "\(run.stdout)")
  }

  @Test func pseudoFileSystemsAreNeverWatched() throws {
    let w = try watch(#"operation { name = "x", inputs = { "/dev/null", "in.txt" }, sh = "true" }"#, ["in.txt": "1"])
    try w.waitFor("taskrun: watching")
    for _ in 0..<5 { try "x".write(toFile: "/dev/null", atomically: false, encoding: .utf8) }
    usleep(800_000)
    let run = w.interrupt()
    #expect(!run.stdout.contains("cycle 2"), "\(run.stdout)")
  }

  @Test func aFirstCycleWhoseScriptDoesNotLoadRunsOnceItIsMended() throws {
    let w = try watch(#"error("boom")"#)
    try w.waitFor("taskrun: watching")
    try w.write(#"operation { name = "a", sh = "true" }"#, "taskrun.lua")
    try w.waitFor("taskrun: watching", times: 2)
    let run = w.interrupt()
    #expect(run.stderr.contains("boom"), "\(run.stderr)")
    #expect(w.cycle(2, in: run.stdout).contains("ok        a ("), "it holds its own store's lock: \(run.stdout)")
    #expect(!run.stdout.contains("waiting for another taskrun"), "\(run.stdout)")
  }

  @Test func optionsThatCannotGoWithWatchAreRefused() throws {
    let dir = try Scratch.folder("watch-options", ["taskrun.lua": "operation { name = 'x', sh = 'true' }"])
    for (arguments, message) in [
      (["--debounce", "10"], "--debounce goes with -w"),
      (["-w", "-n"], "-w cannot be used with -n"),
      (["-w", "--no-store"], "-w needs the run store"),
      (["-w", "--debounce", "20000"], "--debounce must be from 0 to 10000")
    ] {
      let run = try Binary.run(arguments, in: dir)
      #expect(run.status == 2 && run.stderr.contains(message), "\(arguments): \(run.stderr)")
    }
  }
}

/// `service = true`: a real listener on the loopback interface.
@Suite struct ServiceTests {
  /// A socket bound to a free loopback port (listening when `listen`), and the port.
  static func bound(listen: Bool = false) -> (fd: Int32, port: Int) {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    _ = withUnsafePointer(to: &address) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
    }
    if listen { _ = Glibc.listen(fd, 16) }
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    _ = withUnsafeMutablePointer(to: &address) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
    }
    return (fd, Int(UInt16(bigEndian: address.sin_port)))
  }

  /// A port no one listens on now.
  static func freePort() -> Int {
    let (fd, port) = bound()
    close(fd)
    return port
  }

  static func listening(_ port: Int) -> Bool {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    defer { close(fd) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_port = in_port_t(UInt16(port).bigEndian)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    return withUnsafePointer(to: &address) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
        connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
      }
    } == 0
  }

  static func script(port: Int) -> String {
    """
    operation { name = "server", service = true, inputs = { "server.conf" },
      sh = "exec python3 -m http.server \(port) --bind 127.0.0.1", ready = reachable("127.0.0.1", \(port)) }
    operation { name = "client", after = { "server" }, inputs = { "client.txt" },
      sh = "python3 -c 'import urllib.request; print(urllib.request.urlopen(\\"http://127.0.0.1:\(port)/\\").status)'" }
    """
  }

  /// The pids of the service's lines, in order.
  static func pids(_ text: String) -> [Int32] {
    text.components(separatedBy: "service ready (pid ").dropFirst().compactMap { Int32($0.prefix { $0.isNumber }) }
  }

  @Test func aServiceGatesItsDependentsAndStopsWhenTheRestIsDone() throws {
    let port = Self.freePort()
    let dir = try Scratch.folder(
      "service", ["taskrun.lua": Self.script(port: port), "server.conf": "1", "client.txt": "1"])
    let run = try Binary.run(["--progress", "plain"], in: dir)
    #expect(run.status == 0, "\(run.stdout)\(run.stderr)")
    #expect(run.stdout.contains("ok        client"), "the client reached the server: \(run.stdout)")
    #expect(run.stdout.contains("taskrun: stopped service server"))
    let pid = try #require(Self.pids(run.stdout).first)
    #expect(kill(pid, 0) != 0, "the service is gone")
    #expect(!Self.listening(port))
  }

  @Test func aServiceStaysUpAcrossCyclesAndRestartsOnlyOnItsOwnInputs() throws {
    let port = Self.freePort()
    let dir = try Scratch.folder(
      "service-watch", ["taskrun.lua": Self.script(port: port), "server.conf": "1", "client.txt": "1"])
    let w = WatchTests.Watching(started: try Binary.start(["-w", "--progress", "plain"], in: dir), dir: dir)
    try w.waitFor("taskrun: watching")
    try w.write("2", "client.txt")
    try w.waitFor("taskrun: watching", times: 2)
    #expect(w.cycle(2).contains("fresh     server"), "kept: \(w.output)")
    #expect(w.cycle(2).contains("ok        client ("), "\(w.output)")
    try w.write("2", "server.conf")
    try w.waitFor("taskrun: watching", times: 3)
    #expect(w.cycle(3).contains("ok        server ("), "\(w.output)")
    #expect(
      w.cycle(3).contains("ok        client (") && w.cycle(3).contains("service server started again"), "\(w.output)")
    let pids = Self.pids(w.output)
    #expect(pids.count == 2 && pids[0] != pids[1], "restarted once: \(w.output)")
    #expect(kill(pids[0], 0) != 0, "the first one was stopped")
    let run = w.interrupt()
    #expect(run.status == 130)
    #expect(run.stdout.contains("taskrun: stopped service server"))
    #expect(pids.allSatisfy { kill($0, 0) != 0 } && !Self.listening(port), "Ctrl-C leaves nothing running")
  }

  @Test func ctrlCDuringACycleStopsTheCommandAndTheServiceAndLeavesNothing() throws {
    let port = Self.freePort()
    let dir = try Scratch.folder(
      "service-ctrl-c",
      [
        "taskrun.lua": """
        operation { name = "server", service = true, ready = reachable("127.0.0.1", \(port)),
          sh = "exec python3 -m http.server \(port) --bind 127.0.0.1" }
        operation { name = "long", after = { "server" }, sh = "echo $$ > long.pid; exec sleep 60" }
        """
      ])
    let w = WatchTests.Watching(started: try Binary.start(["-w", "--progress", "plain"], in: dir), dir: dir)
    try w.waitFor("start     long")
    let pidFile = dir.appendingPathComponent("long.pid")
    func read() -> Int32? {
      Int32(((try? String(contentsOf: pidFile, encoding: .utf8)) ?? "").trimmingCharacters(in: .whitespacesAndNewlines))
    }
    let deadline = Date().addingTimeInterval(30)
    while read() == nil && Date() < deadline { usleep(20_000) }  // made, then written: read until whole
    let long = read()
    let server = Self.pids(w.output).first
    let run = w.interrupt()
    #expect(run.status == 130, "\(run.stdout)\(run.stderr)")
    #expect(run.stdout.contains("taskrun: stopped service server"), "\(run.stdout)")
    for pid in [long, server].compactMap({ $0 }) { #expect(kill(pid, 0) != 0, "pid \(pid) outlived taskrun") }
    #expect(long != nil && server != nil)
    #expect(!Self.listening(port))
  }

  @Test func aSecondCtrlCEndsServicesThatIgnoreTermAndCommandsThatTrapIt() throws {
    let dir = try Scratch.folder(
      "service-second-ctrl-c",
      [
        "taskrun.lua": """
        operation { name = "trap", sh = "trap '' TERM INT; (trap '' TERM INT; sleep 60) & sleep 60" }
        operation { name = "svc", service = true, sh = "trap '' TERM; echo $$ > svc.pid; exec sleep 70" }
        """
      ])
    let w = WatchTests.Watching(started: try Binary.start(["-w", "--progress", "plain"], in: dir), dir: dir)
    try w.waitFor("start     trap")
    try w.waitFor("service ready")
    let service = Self.pids(w.output).first
    kill(w.started.child.pid, SIGINT)
    usleep(300_000)
    kill(w.started.child.pid, SIGINT)  // while the first one's grace runs: the strays are swept
    let began = Date()
    let run = Binary.finish(w.started, timeout: 20)
    #expect(run.status == 130, "\(run.stdout)\(run.stderr)")
    #expect(Date().timeIntervalSince(began) < 10, "it ended within the grace, not at a third Ctrl-C")
    #expect(run.stdout.contains("taskrun: stopped service svc"), "\(run.stdout)")
    if let service { #expect(kill(service, 0) != 0, "the service outlived taskrun") }
  }

  @Test func aServiceTheScriptNoLongerDeclaresIsStopped() throws {
    let port = Self.freePort()
    let service = """
      operation { name = "old", service = true, ready = reachable("127.0.0.1", \(port)),
        sh = "exec python3 -m http.server \(port) --bind 127.0.0.1" }
      """
    let dir = try Scratch.folder(
      "service-removed", ["taskrun.lua": service + "\noperation { name = 'x', sh = 'true' }\n"])
    let w = WatchTests.Watching(started: try Binary.start(["-w", "--progress", "plain"], in: dir), dir: dir)
    try w.waitFor("taskrun: watching")
    let pid = try #require(Self.pids(w.output).first)
    try w.write("operation { name = 'x', sh = 'true' }\n", "taskrun.lua")
    try w.waitFor("taskrun: watching", times: 2)
    #expect(w.output.contains("taskrun: stopped service old: the script no longer declares it"), "\(w.output)")
    #expect(kill(pid, 0) != 0 && !Self.listening(port))
    _ = w.interrupt()
  }

  @Test func aServiceThatEndsBetweenCyclesIsSaidAndStartsAgain() throws {
    let port = Self.freePort()
    let dir = try Scratch.folder(
      "service-ends",
      [
        "taskrun.lua": """
        operation { name = "server", service = true, ready = reachable("127.0.0.1", \(port)),
          sh = "echo $$ > server.pid; exec python3 -m http.server \(port) --bind 127.0.0.1" }
        operation { name = "client", after = { "server" }, inputs = { "client.txt" }, sh = "true" }
        """, "client.txt": "1"
      ])
    let w = WatchTests.Watching(started: try Binary.start(["-w", "--progress", "plain"], in: dir), dir: dir)
    try w.waitFor("taskrun: watching")
    let first = try #require(Self.pids(w.output).first)
    kill(first, SIGKILL)  // the service taskrun started, and nothing else
    let deadline = Date().addingTimeInterval(30)
    while !w.errors.contains("service server was killed by signal 9") && Date() < deadline { usleep(20_000) }
    try w.write("2", "client.txt")
    try w.waitFor("taskrun: watching", times: 2)
    let run = w.interrupt()
    #expect(run.stderr.contains("service server was killed by signal 9"), "\(run.stderr)")
    #expect(run.stderr.contains("it starts again with the next cycle"), "\(run.stderr)")
    let pids = Self.pids(run.stdout)
    #expect(pids.count == 2 && pids[1] != first, "started again: \(run.stdout)")
    #expect(!Self.listening(port))
  }

  @Test func aServiceWhosePortAnotherProcessHoldsIsNeverASuccess() throws {
    // Another listener answers on the port: what answered is not the service, which fails to
    // bind and ends; the run must not end as a success.
    let (fd, port) = Self.bound(listen: true)
    defer { close(fd) }
    let dir = try Scratch.folder(
      "service-port-taken",
      [
        "taskrun.lua": """
        operation { name = "svc", service = true, ready = reachable("127.0.0.1", \(port)),
          sh = "exec python3 -m http.server \(port) --bind 127.0.0.1" }
        operation { name = "dep", after = { "svc" }, sh = "sleep 1" }
        """
      ])
    let run = try Binary.run(["--progress", "plain"], in: dir)
    #expect(run.status == 1, "\(run.stdout)\(run.stderr)")
    #expect(
      run.stderr.contains(
        "'reachable 127.0.0.1:\(port)' holds before the service started: another process answers there"),
      "\(run.stderr)")
    #expect(!run.stdout.contains("ok        dep"), "nothing that needs it ran: \(run.stdout)")
  }

  @Test func aServiceThatEndsBeforeItIsReadyFailsWithItsOutput() throws {
    let port = Self.freePort()
    let dir = try Scratch.folder(
      "service-fails",
      [
        "taskrun.lua": """
        operation { name = "db", service = true, sh = "echo no config >&2; exit 3", ready = reachable("127.0.0.1", \(port)) }
        operation { name = "use", sh = "true", after = { "db" } }
        """
      ])
    let run = try Binary.run(["--progress", "plain"], in: dir)
    #expect(run.status == 1)
    #expect(run.stderr.contains("service exited with status 3 before it was ready"), "\(run.stderr)")
    #expect(run.stderr.contains("no config"), "\(run.stderr)")
  }

  @Test func serviceFieldsAreChecked() throws {
    for (spec, message) in [
      (#"service = true, run = function() end"#, "a service runs a command: give 'sh'"),
      (#"sh = "true", ready = reachable("127.0.0.1", 1)"#, "field 'ready' applies to a service"),
      (#"sh = "true", service = "yes""#, "field 'service' must be a boolean"),
      (#"sh = "true", service = true, ready = 5"#, "field 'ready' must be a condition")
    ] {
      let dir = try Scratch.folder("service-fields", ["taskrun.lua": "operation { name = 's', \(spec) }"])
      let run = try Binary.run([], in: dir)
      #expect(run.status == 2 && run.stderr.contains(message), "\(spec): \(run.stderr)")
      #expect(run.stderr.contains("taskrun.lua:1:"), "\(run.stderr)")
    }
  }
}
