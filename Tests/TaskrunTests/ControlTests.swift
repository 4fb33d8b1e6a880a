// Progress as the handle, through the binary: a paused command's processes are stopped (state T)
// and finish once resumed, a paused body does not advance, Ctrl-C ends paused work, and
// `taskrun status|watch|pause|resume|cancel` reach a run from another process through its
// private socket (each test has a runtime folder of its own: XDG_RUNTIME_DIR).
import Foundation
import TestSupport
import Testing

@Suite(.serialized) struct ControlTests {
  /// A private runtime folder and a scratch folder for one test.
  struct Place {
    let folder: URL
    let runtime: URL
    var environment: [String: String] { ["XDG_RUNTIME_DIR": runtime.path] }

    init() throws {
      folder = Scratch.root.appendingPathComponent("control-\(UUID().uuidString)")
      runtime = folder.appendingPathComponent("runtime")
      try FileManager.default.createDirectory(at: runtime, withIntermediateDirectories: true)
      chmod(runtime.path, 0o700)
    }

    func write(_ name: String, _ text: String) throws {
      try text.write(to: folder.appendingPathComponent(name), atomically: true, encoding: .utf8)
    }

    func read(_ name: String) -> String {
      (try? String(contentsOf: folder.appendingPathComponent(name), encoding: .utf8)) ?? ""
    }

    /// `taskrun ARGS` as a second terminal would run it.
    func taskrun(_ arguments: [String]) throws -> Run {
      Binary.finish(try Binary.start(arguments, in: folder, environment: environment), timeout: 30)
    }

    /// A Unix socket bound at `name` in the runtime folder's `taskrun` (made private), and its path.
    func socket(named name: String) throws -> (fd: Int32, path: String) {
      let folder = runtime.appendingPathComponent("taskrun")
      try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
      chmod(folder.path, 0o700)
      let path = folder.appendingPathComponent(name).path
      let fd = Glibc.socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
      var address = sockaddr_un()
      address.sun_family = sa_family_t(AF_UNIX)
      withUnsafeMutableBytes(of: &address.sun_path) { raw in
        raw.copyBytes(from: path.utf8)
        raw[path.utf8.count] = 0
      }
      let bound = withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
      }
      guard bound == 0 else { throw BindFailed(path: path) }
      return (fd, path)
    }

    /// Waits until `condition` holds (at most 20 s).
    func until(_ what: String, _ condition: () -> Bool) throws {
      let deadline = Date().addingTimeInterval(20)
      while !condition() {
        guard Date() < deadline else { throw Timeout(what: what) }
        usleep(20_000)
      }
    }
  }

  struct Timeout: Error { let what: String }
  struct BindFailed: Error { let path: String }

  /// The state letter of process `pid` (R, S, T, Z…), nil once it is gone.
  static func state(_ pid: Int32) -> Character? {
    guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
      let close = stat.lastIndex(of: ")")
    else { return nil }
    return stat[stat.index(close, offsetBy: 2)]
  }

  static let spinner = """
    operation { name = "spin", sh = "echo $$ > spin.pid; i=0; while [ $i -lt 40 ]; do i=$((i+1)); echo $i > count; sleep 0.05; done" }
    """

  @Test func aPausedCommandIsStoppedAndFinishesOnceResumed() throws {
    let place = try Place()
    try place.write("w.lua", Self.spinner)
    let run = try Binary.start(
      ["--progress", "plain", "--events", "events.ndjson", "w.lua"], in: place.folder, environment: place.environment)
    try place.until("the command to start") {
      Int(place.read("spin.pid").trimmingCharacters(in: .whitespacesAndNewlines)) != nil
    }
    let shell = Int32(place.read("spin.pid").trimmingCharacters(in: .whitespacesAndNewlines))!
    let pid = String(run.child.pid)
    let paused = try place.taskrun(["pause", pid, "spin"])
    #expect(paused.status == 0, "\(paused.stderr)")
    try place.until("the command to stop") { Self.state(shell) == "T" }
    let count = place.read("count")
    usleep(300_000)
    #expect(place.read("count") == count, "a stopped command writes nothing")
    let status = try place.taskrun(["status"])
    #expect(
      status.stdout.contains("w.lua") && status.stdout.contains("spin") && status.stdout.contains("paused"),
      "\(status.stdout)")
    #expect(try place.taskrun(["resume", "w.lua", "spin"]).status == 0)
    let finished = Binary.finish(run, timeout: 30)
    #expect(finished.status == 0 && place.read("count") == "40\n", "\(finished.stdout)\(finished.stderr)")
    #expect(
      finished.stdout.contains("pause     spin") && finished.stdout.contains("resume    spin"), "\(finished.stdout)")
    let events = place.read("events.ndjson")
    #expect(events.contains(#""event":"op_pause","operation":"spin""#) && events.contains(#""event":"op_resume""#))
    #expect(
      FileManager.default.fileExists(atPath: place.runtime.appendingPathComponent("taskrun/\(pid).sock").path) == false,
      "the socket goes with the run")
  }

  @Test func ctrlCEndsPausedWorkAndLeavesNothingBehind() throws {
    let place = try Place()
    try place.write(
      "w.lua",
      Self.spinner + """

        local body = operation { name = "body", run = function() for i = 1, 100 do sleep(0.05) end end }
        operation { name = "pauser", run = function()
          sleep(0.3)
          body.progress:pause()
          io.open("paused", "w"):close()
        end }
        """)
    let run = try Binary.start(
      ["-j4", "--progress", "plain", "w.lua"], in: place.folder, environment: place.environment)
    try place.until("the command to start") {
      Int(place.read("spin.pid").trimmingCharacters(in: .whitespacesAndNewlines)) != nil
    }
    let shell = Int32(place.read("spin.pid").trimmingCharacters(in: .whitespacesAndNewlines))!
    #expect(try place.taskrun(["pause", String(run.child.pid), "spin"]).status == 0)
    try place.until("both to be paused") {
      Self.state(shell) == "T"
        && FileManager.default.fileExists(atPath: place.folder.appendingPathComponent("paused").path)
    }
    kill(run.child.pid, SIGINT)
    let finished = Binary.finish(run, timeout: 30)
    #expect(finished.status == 130, "\(finished.stdout)\(finished.stderr)")
    try place.until("the paused command to be gone") { Self.state(shell) == nil }
    #expect(
      finished.stdout.contains("cancelled body") && finished.stdout.contains("cancelled spin"), "\(finished.stdout)")
  }

  @Test func aPausedBodyDoesNotAdvanceUntilResumedFromAnotherTerminal() throws {
    let place = try Place()
    try place.write(
      "w.lua",
      """
      operation { name = "counter", run = function()
        for i = 1, 30 do
          local f = io.open("ticks", "w"); f:write(i); f:close()
          sleep(0.05)
        end
      end }
      """)
    let run = try Binary.start(["--progress", "plain", "w.lua"], in: place.folder, environment: place.environment)
    try place.until("the body to tick") { (Int(place.read("ticks")) ?? 0) >= 2 }
    #expect(try place.taskrun(["pause", "w.lua", "counter"]).status == 0)
    usleep(200_000)
    let ticks = place.read("ticks")
    usleep(500_000)
    #expect(place.read("ticks") == ticks, "a paused body does not advance")
    let watch = try Binary.start(["watch", "w.lua"], in: place.folder, environment: place.environment)
    #expect(try place.taskrun(["resume", "w.lua", "counter"]).status == 0)
    let finished = Binary.finish(run, timeout: 30)
    #expect(finished.status == 0 && place.read("ticks") == "30")
    let watched = Binary.finish(watch, timeout: 30)
    #expect(
      watched.status == 0 && watched.stdout.contains("ended: exit status 0"), "\(watched.stdout)\(watched.stderr)")
    #expect(watched.stdout.contains("1 done") || watched.stdout.contains("done"), "\(watched.stdout)")
  }

  @Test func cancelReachesAnOperationThroughItsProgressOrEndsTheRun() throws {
    let place = try Place()
    try place.write(
      "w.lua",
      """
      local slow = operation { name = "slow", run = function() sleep(30) end,
        cleanup = function(op, why) local f = io.open("cleanup", "w"); f:write(why); f:close() end }
      slow.progress.on_cancel = function() print("slow's progress cancelled") end
      operation { name = "other", sh = "sleep 30" }
      """)
    let run = try Binary.start(["--progress", "plain", "-k", "w.lua"], in: place.folder, environment: place.environment)
    try place.until("the run to be published") {
      (try? place.taskrun(["status", "--json"]).stdout.contains("\"slow\"")) == true
    }
    let refused = try place.taskrun(["cancel", "w.lua", "nosuch"])
    #expect(refused.status == 1 && refused.stderr.contains("no operation is named 'nosuch'"), "\(refused.stderr)")
    #expect(try place.taskrun(["cancel", "w.lua", "slow"]).status == 0)
    try place.until("the cleanup") { place.read("cleanup") == "cancelled" }
    #expect(try place.taskrun(["cancel", String(run.child.pid)]).status == 0)
    let finished = Binary.finish(run, timeout: 30)
    #expect(finished.status != 0 && finished.stdout.contains("slow's progress cancelled"), "\(finished.stdout)")
    #expect(finished.stdout.contains("cancelled by taskrun cancel"), "\(finished.stdout)\(finished.stderr)")
  }

  @Test func staleSocketsAreRemovedAndUnknownRunsNamed() throws {
    let place = try Place()
    // A socket no one listens on: a run that was killed.
    let (fd, stale) = try place.socket(named: "999999.sock")
    close(fd)
    #expect(FileManager.default.fileExists(atPath: stale))
    let status = try place.taskrun(["status"])
    #expect(status.status == 0 && status.stdout.contains("no taskrun runs of this user"), "\(status.stdout)")
    #expect(!FileManager.default.fileExists(atPath: stale), "the stale socket is removed")
    let unknown = try place.taskrun(["pause", "12345678"])
    #expect(unknown.status == 1 && unknown.stderr.contains("no run of this user has pid 12345678"), "\(unknown.stderr)")
  }

  @Test func aFolderThatIsNotPrivateIsNeverUsed() throws {
    let place = try Place()
    // Someone made the folder a link to one of theirs: the run is not published there.
    let elsewhere = place.folder.appendingPathComponent("elsewhere")
    try FileManager.default.createDirectory(at: elsewhere, withIntermediateDirectories: true)
    chmod(elsewhere.path, 0o700)
    try FileManager.default.createSymbolicLink(
      at: place.runtime.appendingPathComponent("taskrun"), withDestinationURL: elsewhere)
    try place.write("w.lua", #"operation { name = "a", run = function() end }"#)
    let run = try place.taskrun(["--progress", "plain", "w.lua"])
    let said = run.stdout + run.stderr
    #expect(
      run.status == 0 && said.contains("not published for taskrun status") && said.contains("not a private folder"),
      "\(said)")
    #expect(
      (try FileManager.default.contentsOfDirectory(atPath: elsewhere.path)).isEmpty, "nothing written through the link")
    let status = try place.taskrun(["status"])
    #expect(status.status == 1 && status.stderr.contains("is not a private folder of this user"), "\(status.stderr)")
  }

  @Test func theWholeRunPausesAndResumes() throws {
    let place = try Place()
    try place.write(
      "w.lua",
      """
      operation { name = "first", run = function() sleep(0.5) end }
      operation { name = "second", after = { "first" }, run = function() io.open("second", "w"):close() end }
      """)
    let run = try Binary.start(["--progress", "plain", "w.lua"], in: place.folder, environment: place.environment)
    try place.until("the run to be published") {
      (try? place.taskrun(["status", "--json"]).stdout.contains("\"first\"")) == true
    }
    #expect(try place.taskrun(["pause", "w.lua"]).status == 0)
    usleep(1_000_000)
    #expect(
      !FileManager.default.fileExists(atPath: place.folder.appendingPathComponent("second").path), "nothing starts")
    let json = try place.taskrun(["status", "--json"]).stdout
    #expect(json.contains(#""paused":true"#) && !json.contains(#""eta":"#), "no ETA while paused: \(json)")
    #expect(try place.taskrun(["resume", "w.lua"]).status == 0)
    #expect(Binary.finish(run, timeout: 30).status == 0)
    #expect(FileManager.default.fileExists(atPath: place.folder.appendingPathComponent("second").path))
  }

  /// The example of the README: a second terminal pauses and resumes its command.
  @Test func theRemoteControlExampleIsPausedAndResumedFromASecondTerminal() throws {
    let place = try Place()
    let example = Binary.packageRoot.appendingPathComponent("examples/remote-control.lua").path
    try FileManager.default.copyItem(
      atPath: example, toPath: place.folder.appendingPathComponent("remote-control.lua").path)
    let run = try Binary.start(
      ["--progress", "plain", "remote-control.lua", "--", "0.1"], in: place.folder, environment: place.environment)
    try place.until("transcode to run") {
      (try? place.taskrun(["status", "--json"]).stdout.contains(#""name":"transcode""#)) == true
    }
    #expect(try place.taskrun(["pause", "remote-control.lua", "transcode"]).status == 0)
    let status = try place.taskrun(["status"]).stdout
    #expect(status.contains("transcode") && status.contains("paused"), "\(status)")
    usleep(500_000)
    #expect(try place.taskrun(["resume", "remote-control.lua", "transcode"]).status == 0)
    let finished = Binary.finish(run, timeout: 60)
    #expect(finished.status == 0, "\(finished.stdout)\(finished.stderr)")
    #expect(finished.stdout.contains("pause     transcode") && finished.stdout.contains("resume    transcode"))
  }

  /// A socket in the folder that answers a byte at a time, forever: the clients give up on
  /// it in time, and a signal ends them at once.
  @Test func clientsGiveUpOnARunThatTricklesAndObeySignals() throws {
    let place = try Place()
    let (listener, path) = try place.socket(named: "\(getpid()).sock")
    #expect(listen(listener, 8) == 0)
    let trickler = Thread {
      while true {
        let client = accept(listener, nil, nil)
        guard client >= 0 else { return }
        Thread {
          for _ in 0..<200 {
            guard send(client, " ", 1, Int32(MSG_NOSIGNAL)) == 1 else { break }
            usleep(100_000)
          }
          close(client)
        }.start()
      }
    }
    trickler.start()
    defer {
      shutdown(listener, Int32(SHUT_RDWR))
      close(listener)
      unlink(path)
    }
    let started = Date()
    let status = try place.taskrun(["status"])
    #expect(Date().timeIntervalSince(started) < 10, "status gave up in time")
    #expect(
      status.status == 0 && status.stdout.contains("(not answering: the run did not answer within 2 s"),
      "\(status.stdout)")
    let watch = try Binary.start(["watch", String(getpid())], in: place.folder, environment: place.environment)
    usleep(500_000)
    kill(watch.child.pid, SIGTERM)
    let ended = Binary.finish(watch, timeout: 10)
    #expect(ended.status == 128 + SIGTERM, "SIGTERM ends watch: \(ended.status)")
    let empty = try place.taskrun(["cancel", String(getpid()), ""])
    #expect(
      empty.status == 1 && empty.stderr.contains("no operation is named '' (leave OPERATION out for the whole run)"),
      "\(empty.stderr)")
  }

  @Test func aCleanupsOutputIsNotTheFailedCommands() throws {
    let place = try Place()
    try place.write(
      "w.lua", #"operation { name = "f", sh = "exit 3", cleanup = function() sh("echo from-cleanup") end }"#)
    let run = try place.taskrun(["--progress", "plain", "w.lua"])
    #expect(run.status == 1 && !(run.stdout + run.stderr).contains("from-cleanup"), "\(run.stdout)\(run.stderr)")
  }
}
