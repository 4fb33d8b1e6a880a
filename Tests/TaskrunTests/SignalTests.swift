// Ctrl-C and SIGTERM: the first cancels everything, a second forces; no child outlives taskrun.
import Foundation
import TestSupport
import Testing

@Suite(.serialized) struct SignalTests {
  /// A workflow whose commands carry a unique marker, so leftovers can be found by name.
  func workflow(_ marker: String) throws -> URL {
    let dir = Scratch.root.appendingPathComponent("taskrun-sig-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
    try """
    operation { name = "sleeper", sh = "sleep 30 # \(marker)" }
    operation { name = "stubborn", sh = { "sh", "-c", "trap '' TERM; sleep 30; : \(marker)" } }
    operation { name = "spin", run = function() while true do end end }
    operation { name = "napper", run = function() sleep(30) end }
    operation { name = "later", after = { "napper" }, sh = "echo never" }
    """.write(to: dir.appendingPathComponent("w.lua"), atomically: true, encoding: .utf8)
    return dir
  }

  func leftovers(_ marker: String) -> Bool {
    (try? Child.output(["pgrep", "-f", marker]).status) == 0
  }

  /// Waits until the run has started everything (its output says so).
  func waitForStart(_ out: URL, count: Int = 4) {
    let deadline = Date().addingTimeInterval(10)
    while Date() < deadline {
      let text = (try? String(contentsOf: out, encoding: .utf8)) ?? ""
      if text.components(separatedBy: "start ").count > count { return }
      usleep(20_000)
    }
  }

  @Test(arguments: [SIGINT, SIGTERM, SIGHUP])
  func firstSignalCancelsEverythingAndExits130(_ signal: Int32) throws {
    let marker = "taskrun-marker-\(UUID().uuidString)"
    let started = try Binary.start(["-j8", "w.lua"], in: try workflow(marker))
    waitForStart(started.out)
    kill(started.child.pid, signal)
    let run = Binary.finish(started, timeout: 20)
    #expect(run.status == 130, "\(run.stdout)\(run.stderr)")
    #expect(run.stdout.contains("cancelled spin: interrupted"))
    #expect(run.stdout.contains("cancelled later: interrupted"))
    #expect(run.stdout.contains("(interrupted)"))
    #expect(!leftovers(marker), "a child process outlived taskrun")
  }

  @Test func backgroundOperationsFinishAfterTheFirstCtrlC() throws {
    let dir = try workflow("unused")
    try """
    operation { name = "upload", observers = { background(5) }, run = function()
      sleep(0.8)
      print("upload finished")
    end }
    operation { name = "spin", run = function() while true do end end }
    """.write(to: dir.appendingPathComponent("bg.lua"), atomically: true, encoding: .utf8)
    let started = try Binary.start(["-j4", "bg.lua"], in: dir)
    waitForStart(started.out, count: 2)
    kill(started.child.pid, SIGINT)
    let run = Binary.finish(started, timeout: 20)
    #expect(run.status == 130)
    #expect(run.stderr.contains("taskrun: waiting up to 5 s for 'upload' to finish (Ctrl-C again to stop it)"))
    #expect(!run.stdout.contains("taskrun: waiting up to"), "a note of taskrun's own, on standard error")
    #expect(run.stdout.contains("upload finished") && run.stdout.contains("ok        upload"), "\(run.stdout)")
    #expect(run.stdout.contains("cancelled spin: interrupted"))
  }

  @Test func ctrlCStopsARunawayLoopAtTheTopLevelOfTheScript() throws {
    let dir = try workflow("unused")
    try "while true do end\n".write(to: dir.appendingPathComponent("top.lua"), atomically: true, encoding: .utf8)
    let started = try Binary.start(["top.lua"], in: dir)
    usleep(300_000)
    kill(started.child.pid, SIGINT)
    let run = Binary.finish(started, timeout: 10)
    #expect(run.status == 130)
    #expect(run.stdout.contains("taskrun: interrupted"))
  }

  @Test func secondCtrlCForcesCommandsThatIgnoreSIGTERM() throws {
    let marker = "taskrun-marker-\(UUID().uuidString)"
    let started = try Binary.start(["-j8", "w.lua"], in: try workflow(marker))
    waitForStart(started.out)
    let sent = Date()
    kill(started.child.pid, SIGINT)
    usleep(200_000)
    kill(started.child.pid, SIGINT)
    let run = Binary.finish(started, timeout: 20)
    #expect(run.status == 130)
    #expect(Date().timeIntervalSince(sent) < 1.8, "the second Ctrl-C did not skip the kill grace")
    #expect(!leftovers(marker))
  }
}
