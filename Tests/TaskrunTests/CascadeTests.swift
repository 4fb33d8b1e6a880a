// Long cascades through the binary: a failure, skip, stop or Ctrl-C spreading through a long chain or deep nesting.
//
// Each finish used to call its consequences directly (finish → evaluate → finish …, a group's
// settle → finish → settle …): ~8,000 links overflowed the stack (SIGSEGV, exit 139, no summary,
// commands left running). The sizes here are the suite's (a debug build on a busy machine);
// `benchmarks/run` times the same cascades at 1,000,000 operations and 100,000 nested groups.
import Foundation
import TestSupport
import Testing

@Suite(.serialized) struct CascadeTests {
  static let chain = 200_000
  static let nesting = 100_000

  /// A folder with `w.lua` holding `script`.
  func workflow(_ script: String) throws -> URL {
    let dir = Scratch.root.appendingPathComponent("taskrun-cascade-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
    try script.write(to: dir.appendingPathComponent("w.lua"), atomically: true, encoding: .utf8)
    return dir
  }

  /// `first`, then a chain of `n` operations after it, each with `fields`.
  func chain(_ first: String, _ n: Int, fields: String = "") -> String {
    "local p = operation { name = \"n0\", \(first) }\n"
      + "for i = 1, \(n) do p = operation { name = \"n\" .. i, after = { p }\(fields) } end\n"
  }

  /// `leaf` inside `n` nested groups, outermost last (`g`).
  func nested(_ leaf: String, _ n: Int) -> String {
    "local g = operation { name = \"leaf\", \(leaf) }\n"
      + "for i = 1, \(n) do g = group { name = \"g\" .. i, g } end\n"
  }

  func run(_ script: String, _ arguments: [String] = ["-q"]) throws -> Run {
    Binary.finish(try Binary.start(arguments + ["w.lua"], in: try workflow(script)), timeout: 300)
  }

  /// Starts `script`, whose command writes its pid to `pid` and sleeps; interrupts the run
  /// once it has, and checks that the command did not outlive it.
  func interrupt(_ script: String) throws -> Run {
    let dir = try workflow(script)
    let started = try Binary.start(["-q", "w.lua"], in: dir)
    let pidFile = dir.appendingPathComponent("pid")
    let deadline = Date().addingTimeInterval(240)
    var pid: pid_t?
    while pid == nil && Date() < deadline && kill(started.child.pid, 0) == 0 {
      pid = (try? String(contentsOf: pidFile, encoding: .utf8)).flatMap {
        pid_t($0.trimmingCharacters(in: .whitespacesAndNewlines))
      }
      if pid == nil { usleep(50_000) }
    }
    #expect(pid != nil, "the command never started")
    kill(started.child.pid, SIGINT)
    let run = Binary.finish(started, timeout: 240)
    if let pid { #expect(kill(pid, 0) != 0 && errno == ESRCH, "the command \(pid) outlived taskrun") }
    return run
  }

  static let sleeper = "sh = \"echo $$ > pid; exec sleep 120\""

  @Test func aFailureSkipsAChainOf200000() throws {
    let run = try run(chain("sh = \"false\"", Self.chain))
    #expect(run.status == 1, "\(run.stderr.suffix(2000))")
    #expect(run.stdout.contains("0 succeeded, 1 failed, \(Self.chain) skipped in"), "\(run.stdout.suffix(500))")
  }

  @Test func whenFailedSkipsAChainOf200000() throws {
    let run = try run(chain("sh = \"true\"", Self.chain, fields: ", when = \"failed\""))
    #expect(run.status == 0, "\(run.stderr.suffix(2000))")
    #expect(run.stdout.contains("1 succeeded, \(Self.chain) skipped in"), "\(run.stdout.suffix(500))")
  }

  @Test func aFailFastStopCancelsAChainOf200000() throws {
    // 'bad' fails while n0 runs: n1 is cancelled, and the rest of the chain skipped after it.
    let run = try run(
      chain("sh = \"sleep 2\"", Self.chain) + "operation { name = \"bad\", sh = \"false\" }\n", ["-q", "-j2"])
    #expect(run.status == 1, "\(run.stderr.suffix(2000))")
    #expect(
      run.stdout.contains("1 succeeded, 1 failed, 1 cancelled, \(Self.chain - 1) skipped in"),
      "\(run.stdout.suffix(500))")
  }

  @Test func ctrlCCancelsAChainOf200000() throws {
    let run = try interrupt(chain(Self.sleeper, Self.chain))
    #expect(run.status == 130, "\(run.stderr.suffix(2000))")
    #expect(
      run.stdout.contains("0 succeeded, \(Self.chain + 1) cancelled in") && run.stdout.contains("(interrupted)"),
      "\(run.stdout.suffix(500))")
  }

  @Test func aFailureFailsAllOf100000NestedGroups() throws {
    let run = try run(nested("sh = \"false\"", Self.nesting))
    #expect(run.status == 1, "\(run.stderr.suffix(2000))")
    #expect(run.stdout.contains("0 succeeded, \(Self.nesting + 1) failed in"), "\(run.stdout.suffix(500))")
    // Each group names its child and the operation that failed, not every group in between.
    let lines = run.stderr.split(separator: "\n")  // the failures
    let g3 = lines.filter { $0.hasPrefix("FAILED    g3 (") }
    #expect(g3.count == 1 && g3[0].hasSuffix("): 'g2' failed: 'leaf' failed: exited with status 1: false"), "\(g3)")
    // The summary lists the leaf, and the groups in one line (not 100,000 more).
    #expect(
      Array(lines.drop { $0 != "Failures:" }) == [
        "Failures:", "  leaf: exited with status 1: false",
        "  \(Self.nesting) groups failed because of 'leaf': g1, g2, g3, …"
      ], "\(lines.drop { $0 != "Failures:" }.prefix(5))")
  }

  @Test func aSkipReachesEveryOneOf100000NestedGroups() throws {
    let run = try run(
      "local bad = operation { name = \"bad\", sh = \"false\" }\n"
        + nested("sh = \"true\"", Self.nesting) + "g:after(bad)\n")
    #expect(run.status == 1, "\(run.stderr.suffix(2000))")
    #expect(run.stdout.contains("0 succeeded, 1 failed, \(Self.nesting + 1) skipped in"), "\(run.stdout.suffix(500))")
  }

  /// Pausing, resuming and cancelling the outermost group's progress reaches all of them
  /// (each node's walk told once: a walk begun again from each group was quadratic).
  @Test func pauseResumeAndCancelThroughTheProgressOf100000NestedGroups() throws {
    let run = try run(
      nested("sh = \"sleep 30\"", Self.nesting)
        + "operation { name = \"driver\", run = function() sleep(0.5); g.progress:pause(); sleep(0.2); "
        + "paused = g.children[1].progress.paused; g.progress:resume(); g:cancel(); assert(paused) end }\n")
    #expect(run.status == 1, "\(run.stderr.suffix(2000))")
    #expect(run.stdout.contains("1 succeeded, \(Self.nesting + 1) cancelled in"), "\(run.stdout.suffix(500))")
  }

  @Test func ctrlCCancelsAllOf100000NestedGroups() throws {
    let run = try interrupt(nested(Self.sleeper, Self.nesting))
    #expect(run.status == 130, "\(run.stderr.suffix(2000))")
    #expect(
      run.stdout.contains("0 succeeded, \(Self.nesting + 1) cancelled in") && run.stdout.contains("(interrupted)"),
      "\(run.stdout.suffix(500))")
  }
}
