// `sh` operations on a real one-node Slurm cluster (scripts/slurm-up), as job steps of an
// allocation: the same outcomes and events as locally, Ctrl-C leaves nothing, TERM before
// KILL, a step cancelled from outside fails with Slurm's reason. Skipped, with the reason,
// where no cluster answers.
import Foundation
import Testing

@Suite(.serialized) struct SlurmTests {
  /// Whether a cluster answers (sinfo shows an idle node).
  static let cluster: Bool = {
    guard let run = try? Child.output(["sinfo", "-h", "-o", "%T"]) else { return false }
    return run.stdout.contains("idle") || run.stdout.contains("mixed") || run.stdout.contains("allocated")
  }()

  /// An allocation of two CPUs for the whole test, and the environment that puts taskrun in it.
  final class Allocation {
    let id: String
    init() throws {
      let run = Binary.finish(try Binary.start(["--no-shell", "-n2", "--job-name=taskrun-tests", "--time=10"],
                                               in: FileManager.default.temporaryDirectory, program: "/usr/bin/salloc"), timeout: 60)
      guard let id = (run.stdout + run.stderr).firstMatch(of: /allocation (\d+)/)?.1 else {
        throw TestFailure("salloc gave no allocation: \(run.stdout)\(run.stderr)")
      }
      self.id = String(id)
    }
    deinit { _ = try? Child.output(["scancel", id]) }
    var environment: [String: String] { ["SLURM_JOB_ID": id, "SLURM_JOBID": id, "TASKRUN_GRACE": "1"] }
  }

  struct TestFailure: Error, CustomStringConvertible { let description: String; init(_ d: String) { description = d } }

  func folder(_ script: String) throws -> URL {
    let dir = FileManager.default.temporaryDirectory.appendingPathComponent("taskrun-slurm-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
    try script.write(to: dir.appendingPathComponent("w.lua"), atomically: true, encoding: .utf8)
    return dir
  }

  /// Each operation's finish (outcome, error, error kind) and its output lines, per name.
  func outcomes(_ file: URL) throws -> [String: String] {
    var byName: [String: String] = [:]
    var output: [String: [String]] = [:]
    for line in try String(contentsOf: file, encoding: .utf8).split(separator: "\n") {
      guard let event = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
            let name = event["operation"] as? String else { continue }
      if event["event"] as? String == "op_finish" {
        byName[name] = "\(event["outcome"]!) | \(event["error"] ?? "-") | \(event["error_kind"] ?? "-")"
      } else if event["event"] as? String == "output" {
        output[name, default: []] += (event["text"] as? String ?? "").split(separator: "\n").map(String.init)
      }
    }
    for (name, lines) in output { byName[name, default: ""] += " | " + lines.sorted().joined(separator: " / ") }
    return byName
  }

  static let workflow = """
    local q = queue { name = "work", executor = EXECUTOR, max_concurrent = 4 }
    local layers = {}
    for l = 1, 4 do
      layers[l] = {}
      for i = 1, 5 do
        local after = l > 1 and { layers[l - 1][i], layers[l - 1][i % 5 + 1] } or nil
        local command = string.format("echo '[1/2] %d.%d'; echo 'note %d.%d' >&2; echo '[2/2] done'", l, i, l, i)
        if l == 2 and i == 3 then command = "echo failing >&2; exit 3" end
        if l == 1 and i == 4 then command = "sleep 5" end
        layers[l][i] = operation { name = "l" .. l .. "_" .. i, queue = q, after = after, sh = command,
          timeout = (l == 1 and i == 4) and 1 or nil, retries = (l == 3 and i == 1) and 1 or nil,
          progress = "%[(%d+)/(%d+)%]" }
      end
    end
    """

  @Test(.enabled(if: cluster, "no Slurm cluster answers (scripts/slurm-up starts one, as root)"))
  func twentyOperationsGiveTheSameOutcomesEventsAndExitCodeAsLocally() throws {
    let allocation = try Allocation()
    let dir = try folder(Self.workflow.replacingOccurrences(of: "EXECUTOR", with: "\"local\""))
    let local = Binary.finish(try Binary.start(["-k", "--progress", "plain", "--events", "local.ndjson", "w.lua"], in: dir), timeout: 60)
    try Self.workflow.replacingOccurrences(of: "EXECUTOR", with: "\"slurm\"")
      .write(to: dir.appendingPathComponent("w.lua"), atomically: true, encoding: .utf8)
    let slurm = Binary.finish(try Binary.start(["-k", "--progress", "plain", "--events", "slurm.ndjson", "w.lua"], in: dir,
                                               environment: allocation.environment), timeout: 120)
    #expect(local.status == 1 && slurm.status == 1, "\(slurm.stdout)\(slurm.stderr)")
    let here = try outcomes(dir.appendingPathComponent("local.ndjson"))
    let there = try outcomes(dir.appendingPathComponent("slurm.ndjson"))
    #expect(here.count == 20)
    for name in here.keys.sorted() { #expect(here[name] == there[name], "\(name): local \(here[name]!) / slurm \(there[name] ?? "-")") }
  }

  @Test(.enabled(if: cluster, "no Slurm cluster answers (scripts/slurm-up starts one, as root)"))
  func ctrlCLeavesNoStepAndTheCommandGetsTermBeforeKill() throws {
    let allocation = try Allocation()
    let dir = try folder("""
      local q = queue { name = "work", executor = "slurm" }
      operation { name = "polite", queue = q, sh = "trap 'echo got TERM > term.txt; exit 0' TERM; echo started; sleep 30 & wait" }
      operation { name = "plain", queue = q, sh = "sleep 30" }
      """)
    let started = try Binary.start(["--progress", "plain", "-v", "w.lua"], in: dir, environment: allocation.environment)
    let deadline = Date().addingTimeInterval(20)
    while Date() < deadline, !((try? String(contentsOf: started.out, encoding: .utf8)) ?? "").contains("[polite] started") {
      usleep(50_000)
    }
    usleep(300_000)
    kill(started.child.pid, SIGINT)
    let run = Binary.finish(started, timeout: 30)
    #expect(run.status == 130, "\(run.stdout)\(run.stderr)")
    let term = (try? String(contentsOf: dir.appendingPathComponent("term.txt"), encoding: .utf8)) ?? ""
    #expect(term == "got TERM\n", "the command saw TERM, not only KILL")
    let steps = try Child.output(["squeue", "-s", "-h", "-j", allocation.id, "-o", "%i %j"]).stdout
    #expect(!steps.contains("taskrun."), "no step of the run is left: \(steps)")
  }

  @Test(.enabled(if: cluster, "no Slurm cluster answers (scripts/slurm-up starts one, as root)"))
  func aStepCancelledFromOutsideFailsWithThatReason() throws {
    let allocation = try Allocation()
    let dir = try folder("""
      local q = queue { name = "work", executor = "slurm" }
      operation { name = "victim", queue = q, sh = "echo running; sleep 30" }
      """)
    let started = try Binary.start(["--progress", "plain", "-v", "w.lua"], in: dir, environment: allocation.environment)
    var step = ""
    let deadline = Date().addingTimeInterval(20)
    while Date() < deadline && step.isEmpty {
      usleep(100_000)
      step = try Child.output(["squeue", "-s", "-h", "-j", allocation.id, "-o", "%i %j"]).stdout
        .split(separator: "\n").first { $0.contains("taskrun.") }.map { String($0.split(separator: " ")[0]) } ?? ""
    }
    #expect(!step.isEmpty, "the step shows in squeue")
    _ = try Child.output(["scancel", step])
    let run = Binary.finish(started, timeout: 30)
    #expect(run.status == 1)
    #expect(run.stderr.contains("FAILED    victim") && run.stderr.contains("cancelled in Slurm (step \(step) on"), "\(run.stderr)")
  }
}

@Suite struct SlurmUsageTests {
  @Test func outsideAnAllocationSlurmIsAUsageErrorThatSaysWhy() throws {
    let dir = FileManager.default.temporaryDirectory.appendingPathComponent("taskrun-noalloc-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
    try #"queue { name = "hpc", executor = "slurm" }"#.write(to: dir.appendingPathComponent("w.lua"), atomically: true, encoding: .utf8)
    let run = Binary.finish(try Binary.start(["w.lua"], in: dir))
    #expect(run.status == 2)
    #expect(run.stderr.contains("queue 'hpc': executor 'slurm'"), "\(run.stderr)")
    let bad = try Binary.run(["--executor", "cloud", "w.lua"], in: dir)
    #expect(bad.status == 2)
    try #"queue { name = "hpc", executor = "slurm", slurm = { mem = "lots" } }"#.write(to: dir.appendingPathComponent("w.lua"), atomically: true, encoding: .utf8)
    let mem = try Binary.run(["--executor", "local", "w.lua"], in: dir)
    #expect(mem.status == 2 && mem.stderr.contains("mem must be a number of megabytes"), "\(mem.stderr)")
  }
}
