// `sh` operations on a real one-node Slurm cluster (scripts/slurm-up), as job steps of an
// allocation: the same outcomes and events as locally, Ctrl-C leaves nothing, TERM before
// KILL, a step cancelled from outside fails with Slurm's reason. Skipped, with the reason,
// where no cluster answers.
import Foundation
import TestSupport
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
      let run = Binary.finish(
        try Binary.start(
          ["--no-shell", "-n2", "--job-name=taskrun-tests", "--time=10"],
          in: Scratch.root, program: "/usr/bin/salloc"), timeout: 60)
      guard let id = (run.stdout + run.stderr).firstMatch(of: /allocation (\d+)/)?.1 else {
        throw TestFailure("salloc gave no allocation: \(run.stdout)\(run.stderr)")
      }
      self.id = String(id)
    }
    deinit { _ = try? Child.output(["scancel", id]) }
    var environment: [String: String] { ["SLURM_JOB_ID": id, "SLURM_JOBID": id, "TASKRUN_GRACE": "1"] }
  }

  struct TestFailure: Error, CustomStringConvertible { let description: String; init(_ d: String) { description = d } }

  /// Commands of these tests carry this in their environment (the node is this machine).
  static let mark = "slurm-\(UUID().uuidString)"

  /// Waits up to `seconds` for the marked processes to be gone; returns those left.
  static func survivors(after seconds: Double) -> [pid_t] {
    func marked() -> [pid_t] {
      ((try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []).compactMap { pid_t($0) }.filter { pid in
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
          stat.split(separator: ")").last?.split(separator: " ").first != "Z",
          let environ = FileManager.default.contents(atPath: "/proc/\(pid)/environ")
        else { return false }
        return String(decoding: environ, as: UTF8.self).contains("TASKRUN_TEST_MARK=\(mark)")
      }
    }
    let deadline = Date().addingTimeInterval(seconds)
    var left = marked()
    while !left.isEmpty && Date() < deadline { usleep(100_000); left = marked() }
    return left
  }

  func folder(_ script: String) throws -> URL {
    let dir = Scratch.root.appendingPathComponent("taskrun-slurm-\(UUID().uuidString)")
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
        let name = event["operation"] as? String
      else { continue }
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
    operation { name = "nowhere", queue = q, after = { layers[1][1] }, cwd = "/no/such/dir", sh = "true" }
    """

  @Test(.enabled(if: cluster, "no Slurm cluster answers (scripts/slurm-up starts one, as root)"))
  func twentyOperationsGiveTheSameOutcomesEventsAndExitCodeAsLocally() throws {
    let allocation = try Allocation()
    let dir = try folder(Self.workflow.replacingOccurrences(of: "EXECUTOR", with: "\"local\""))
    let local = Binary.finish(
      try Binary.start(["-k", "--progress", "plain", "--events", "local.ndjson", "w.lua"], in: dir), timeout: 60)
    try Self.workflow.replacingOccurrences(of: "EXECUTOR", with: "\"slurm\"")
      .write(to: dir.appendingPathComponent("w.lua"), atomically: true, encoding: .utf8)
    let slurm = Binary.finish(
      try Binary.start(
        ["-k", "--progress", "plain", "--events", "slurm.ndjson", "w.lua"], in: dir,
        environment: allocation.environment), timeout: 120)
    #expect(local.status == 1 && slurm.status == 1, "\(slurm.stdout)\(slurm.stderr)")
    let here = try outcomes(dir.appendingPathComponent("local.ndjson"))
    let there = try outcomes(dir.appendingPathComponent("slurm.ndjson"))
    #expect(here.count == 21)
    for name in here.keys.sorted() {
      #expect(here[name] == there[name], "\(name): local \(here[name]!) / slurm \(there[name] ?? "-")")
    }
  }

  @Test(.enabled(if: cluster, "no Slurm cluster answers (scripts/slurm-up starts one, as root)"))
  func ctrlCLeavesNoStepAndTheCommandGetsTermBeforeKill() throws {
    let allocation = try Allocation()
    let dir = try folder(
      """
      local q = queue { name = "work", executor = "slurm" }
      operation { name = "polite", queue = q, sh = "trap 'echo got TERM > term.txt; exit 0' TERM; echo started; while :; do sleep 0.1; done" }
      operation { name = "plain", queue = q, env = { TASKRUN_TEST_MARK = "\(Self.mark)" }, sh = "sleep 30" }
      """)
    let started = try Binary.start(["--progress", "plain", "-v", "w.lua"], in: dir, environment: allocation.environment)
    let deadline = Date().addingTimeInterval(20)
    while Date() < deadline,
      !((try? String(contentsOf: started.out, encoding: .utf8)) ?? "").contains("[polite] started")
    {
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
    #expect(Self.survivors(after: 10).isEmpty, "no process of the run is left on the node")
  }

  @Test(.enabled(if: cluster, "no Slurm cluster answers (scripts/slurm-up starts one, as root)"))
  func aStepCancelledFromOutsideFailsWithThatReason() throws {
    let allocation = try Allocation()
    let dir = try folder(
      """
      local q = queue { name = "work", executor = "slurm" }
      operation { name = "victim", queue = q, sh = "echo running; sleep 30" }
      """)
    let started = try Binary.start(["--progress", "plain", "-v", "w.lua"], in: dir, environment: allocation.environment)
    var step = ""
    let deadline = Date().addingTimeInterval(20)
    while Date() < deadline && step.isEmpty {
      usleep(100_000)
      step =
        try Child.output(["squeue", "-s", "-h", "-j", allocation.id, "-o", "%i %j"]).stdout
        .split(separator: "\n").first { $0.contains("taskrun.") }.map { String($0.split(separator: " ")[0]) } ?? ""
    }
    #expect(!step.isEmpty, "the step shows in squeue")
    _ = try Child.output(["scancel", step])
    let run = Binary.finish(started, timeout: 30)
    #expect(run.status == 1)
    #expect(
      run.stderr.contains("FAILED    victim") && run.stderr.contains("cancelled in Slurm (step \(step) on"),
      "\(run.stderr)")
  }

  /// A second Ctrl-C kills srun itself: the steps then run on in Slurm until taskrun cancels
  /// them, and taskrun does not exit before Slurm has let them go.
  @Test(.enabled(if: cluster, "no Slurm cluster answers (scripts/slurm-up starts one, as root)"))
  func aSecondCtrlCLeavesNoStepInSlurmOnceTaskrunHasExited() throws {
    let allocation = try Allocation()
    let dir = try folder(
      """
      local q = queue { name = "work", executor = "slurm" }
      for i = 1, 2 do
        operation { name = "stubborn " .. i, queue = q, env = { TASKRUN_TEST_MARK = "\(Self.mark)" },
          sh = "trap '' TERM; echo started; while :; do sleep 0.1; done" }
      end
      """)
    let started = try Binary.start(["--progress", "plain", "-v", "w.lua"], in: dir, environment: allocation.environment)
    let deadline = Date().addingTimeInterval(30)
    func output() -> String { (try? String(contentsOf: started.out, encoding: .utf8)) ?? "" }
    while Date() < deadline, !(output().contains("[stubborn 1] started") && output().contains("[stubborn 2] started")) {
      usleep(50_000)
    }
    kill(started.child.pid, SIGINT)
    usleep(300_000)
    kill(started.child.pid, SIGINT)
    let run = Binary.finish(started, timeout: 60)
    #expect(run.status == 130, "\(run.stdout)\(run.stderr)")
    let steps = try Child.output(["squeue", "-s", "-h", "-j", allocation.id, "-o", "%i %j"]).stdout
    #expect(!steps.contains("taskrun."), "no step of the run is left once taskrun has exited: \(steps)")
    #expect(Self.survivors(after: 10).isEmpty, "no process of the run is left on the node")
  }

  /// Steps cancelled the moment they exist, before srun has heard from their tasks: srun then
  /// often drops slurmstepd's CANCELLED line, or even exits 0; each still fails with Slurm's
  /// reason. A fresh allocation numbers its steps from 0, so step i is known before it exists.
  @Test(.enabled(if: cluster, "no Slurm cluster answers (scripts/slurm-up starts one, as root)"))
  func stepsCancelledAsTheyStartFailWithThatReason() throws {
    let allocation = try Allocation()
    let count = 6
    let dir = try folder(
      """
      local q = queue { name = "work", executor = "slurm", max_concurrent = 1 }
      for i = 0, \(count - 1) do operation { name = "victim " .. i, queue = q, sh = "echo running; sleep 30" } end
      """)
    let started = try Binary.start(
      ["-k", "--progress", "plain", "--events", "events.ndjson", "w.lua"], in: dir,
      environment: allocation.environment)
    let deadline = Date().addingTimeInterval(120)
    for i in 0..<count {
      while Date() < deadline,
        try Child.output(["sh", "-c", "exec scancel \(allocation.id).\(i) 2>/dev/null"]).status != 0
      {}
    }
    let run = Binary.finish(started, timeout: 120)
    #expect(run.status == 1, "\(run.stdout)\(run.stderr)")
    let outcomes = try outcomes(dir.appendingPathComponent("events.ndjson"))
    for i in 0..<count {
      let outcome = outcomes["victim \(i)"] ?? "-"
      #expect(
        outcome.hasPrefix("failed | cancelled in Slurm (step \(allocation.id).\(i) on "), "victim \(i): \(outcome)")
    }
  }
}

/// Outside an allocation: each command a batch job, its output and status through files.
/// (In SlurmTests, so that they do not share the one-node cluster with the step tests.)
extension SlurmTests {
  static let batchEnvironment = ["TASKRUN_SLURM_POLL": "0.2", "TASKRUN_GRACE": "1"]

  /// Names of this machine's jobs still pending or running that taskrun named.
  func liveJobs() throws -> String {
    try Child.output(["squeue", "-h", "-t", "pending,running,completing", "-o", "%j"]).stdout
      .split(separator: "\n").filter { $0.hasPrefix("taskrun.") }.joined(separator: "\n")
  }

  @Test(.enabled(if: cluster, "no Slurm cluster answers (scripts/slurm-up starts one, as root)"))
  func batchJobsGiveTheSameOutcomesEventsAndExitCodeAsLocally() throws {
    let dir = try folder(SlurmTests.workflow.replacingOccurrences(of: "EXECUTOR", with: "\"local\""))
    let local = Binary.finish(
      try Binary.start(["-k", "--progress", "plain", "--events", "local.ndjson", "w.lua"], in: dir), timeout: 60)
    try SlurmTests.workflow.replacingOccurrences(of: "EXECUTOR", with: "\"slurm\"")
      .write(to: dir.appendingPathComponent("w.lua"), atomically: true, encoding: .utf8)
    let slurm = Binary.finish(
      try Binary.start(
        ["-k", "--progress", "plain", "--events", "slurm.ndjson", "w.lua"], in: dir,
        environment: Self.batchEnvironment), timeout: 300)
    #expect(local.status == 1 && slurm.status == 1, "\(slurm.stdout)\(slurm.stderr)")
    let here = try outcomes(dir.appendingPathComponent("local.ndjson"))
    let there = try outcomes(dir.appendingPathComponent("slurm.ndjson"))
    for name in here.keys.sorted() {
      #expect(here[name] == there[name], "\(name): local \(here[name]!) / slurm \(there[name] ?? "-")")
    }
    #expect(
      !FileManager.default.fileExists(atPath: dir.appendingPathComponent(".taskrun/slurm").path),
      "the run's folder is gone")
  }

  /// `kill -9` of taskrun leaves its batch jobs running; `--resume` follows them (polls and
  /// collects) instead of submitting them again, and reuses what had succeeded.
  @Test(.enabled(if: cluster, "no Slurm cluster answers (scripts/slurm-up starts one, as root)"))
  func resumeFollowsTheBatchJobsOfAKilledRun() throws {
    let dir = try folder(
      """
      local q = queue { name = "work", executor = "slurm" }
      operation { name = "quick", queue = q, sh = "echo ran >> quick.count" }
      operation { name = "long", queue = q, sh = "echo $SLURM_JOB_ID >> jobs; sleep 4; echo done > long.out" }
      operation { name = "after", after = "long", sh = "cat long.out > after.out" }
      """)
    let first = try Binary.start(["--progress", "plain", "w.lua"], in: dir, environment: Self.batchEnvironment)
    let deadline = Date().addingTimeInterval(60)
    let exists = { (name: String) in FileManager.default.fileExists(atPath: dir.appendingPathComponent(name).path) }
    while Date() < deadline, !(exists("jobs") && exists("quick.count")) { usleep(50_000) }
    usleep(1_000_000)  // quick's finish is seen and recorded
    kill(first.child.pid, SIGKILL)
    _ = Binary.finish(first, timeout: 10)
    #expect(!exists("long.out"), "the job still runs after taskrun was killed")
    let resumed = Binary.finish(
      try Binary.start(["--resume", "--progress", "plain", "w.lua"], in: dir, environment: Self.batchEnvironment),
      timeout: 120)
    let read = { (name: String) in (try? String(contentsOf: dir.appendingPathComponent(name), encoding: .utf8)) ?? "" }
    #expect(resumed.status == 0, "\(resumed.stdout)\(resumed.stderr)")
    #expect(read("jobs").split(separator: "\n").count == 1, "submitted once: \(read("jobs"))")
    #expect(read("quick.count") == "ran\n", "quick is reused, not run again")
    #expect(read("after.out") == "done\n")
    #expect(resumed.stdout.contains("resumed   quick"), "\(resumed.stdout)")
    #expect(try liveJobs().isEmpty)
    let left =
      (try? FileManager.default.contentsOfDirectory(atPath: dir.appendingPathComponent(".taskrun/slurm").path)) ?? []
    #expect(left.isEmpty, "the killed run's job folders are collected: \(left)")
  }

  /// Pausing a batch job's operation stops its command on the node (state T: the wrapper
  /// stops the command's session, which Slurm's own signals do not reach) and resuming it lets
  /// it finish.
  @Test(.enabled(if: cluster, "no Slurm cluster answers (scripts/slurm-up starts one, as root)"))
  func batchPauseStopsTheCommandAndResumeLetsItFinish() throws {
    let dir = try folder(
      """
      local q = queue { name = "work", executor = "slurm" }
      local spin = operation { name = "spin", queue = q,
        sh = "echo $$ > pid; i=0; while [ $i -lt 30 ]; do i=$((i+1)); echo $i > count; sleep 0.1; done" }
      operation { name = "driver", run = function()
        while not io.open("pid") do sleep(0.1) end
        sleep(0.3)
        spin.progress:pause()
        sleep(0.5)
        local f = io.open("paused", "w"); f:write("yes"); f:close()
        sleep(1.5)
        spin.progress:resume()
      end }
      """)
    let started = try Binary.start(["--progress", "plain", "w.lua"], in: dir, environment: Self.batchEnvironment)
    let deadline = Date().addingTimeInterval(60)
    let paused = dir.appendingPathComponent("paused").path
    while Date() < deadline, !FileManager.default.fileExists(atPath: paused) { usleep(50_000) }
    let read = { (name: String) in
      ((try? String(contentsOf: dir.appendingPathComponent(name), encoding: .utf8)) ?? "")
        .trimmingCharacters(in: .whitespacesAndNewlines)
    }
    let pid = try #require(Int32(read("pid")))
    let stat = (try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8)) ?? ""
    let state = stat.lastIndex(of: ")").map { stat[stat.index($0, offsetBy: 2)] }
    let count = read("count")
    usleep(500_000)
    #expect(state == "T" && read("count") == count, "the command is stopped: \(state.map(String.init) ?? "-") \(count)")
    let run = Binary.finish(started, timeout: 120)
    #expect(run.status == 0 && read("count") == "30", "\(run.stdout)\(run.stderr)")
  }

  @Test(.enabled(if: cluster, "no Slurm cluster answers (scripts/slurm-up starts one, as root)"))
  func batchCtrlCLeavesNoJobAndTheCommandGetsTermBeforeKill() throws {
    let dir = try folder(
      """
      local q = queue { name = "work", executor = "slurm" }
      operation { name = "polite", queue = q, sh = "trap 'echo got TERM > term.txt; exit 0' TERM; echo started; while :; do sleep 0.1; done" }
      for i = 1, 3 do operation { name = "waits " .. i, queue = q, env = { TASKRUN_TEST_MARK = "\(Self.mark)" }, sh = "sleep 30" } end
      """)
    let started = try Binary.start(["--progress", "plain", "-v", "w.lua"], in: dir, environment: Self.batchEnvironment)
    let deadline = Date().addingTimeInterval(30)
    while Date() < deadline,
      !((try? String(contentsOf: started.out, encoding: .utf8)) ?? "").contains("[polite] started")
    {
      usleep(50_000)
    }
    kill(started.child.pid, SIGINT)
    let run = Binary.finish(started, timeout: 30)
    #expect(run.status == 130, "\(run.stdout)\(run.stderr)")
    let settle = Date().addingTimeInterval(10)
    while Date() < settle, !(try liveJobs()).isEmpty { usleep(200_000) }
    #expect(try liveJobs().isEmpty, "no job of the run is left in squeue")
    #expect(Self.survivors(after: 10).isEmpty, "no process of the run is left on the node")
    let term = (try? String(contentsOf: dir.appendingPathComponent("term.txt"), encoding: .utf8)) ?? ""
    #expect(term == "got TERM\n", "the command saw TERM before KILL")
  }

  @Test(.enabled(if: cluster, "no Slurm cluster answers (scripts/slurm-up starts one, as root)"))
  func aBatchJobCancelledFromOutsideFailsWithThatReason() throws {
    let dir = try folder(
      """
      local q = queue { name = "work", executor = "slurm" }
      operation { name = "victim", queue = q, sh = "echo running; sleep 30" }
      """)
    let started = try Binary.start(["--progress", "plain", "-v", "w.lua"], in: dir, environment: Self.batchEnvironment)
    var job = ""
    let deadline = Date().addingTimeInterval(30)
    while Date() < deadline && job.isEmpty {
      usleep(100_000)
      if ((try? String(contentsOf: started.out, encoding: .utf8)) ?? "").contains("[victim] running") {
        job =
          try Child.output(["squeue", "-h", "-t", "running", "-o", "%i %j"]).stdout
          .split(separator: "\n").first { $0.contains(" taskrun.") }.map { String($0.split(separator: " ")[0]) } ?? ""
      }
    }
    #expect(!job.isEmpty, "the job runs")
    _ = try Child.output(["scancel", job])
    let run = Binary.finish(started, timeout: 60)
    #expect(run.status == 1)
    #expect(
      run.stderr.contains("FAILED    victim") && run.stderr.contains("cancelled in Slurm (job \(job))"), "\(run.stderr)"
    )
  }
}

/// The batch launcher against a fake Slurm (scripts on PATH), which runs everywhere.
@Suite struct FakeSlurmTests {
  func fake(_ tools: [String: String]) throws -> (URL, [String: String]) {
    let dir = Scratch.root.appendingPathComponent("taskrun-fakeslurm-\(UUID().uuidString)")
    let bin = dir.appendingPathComponent("bin")
    try FileManager.default.createDirectory(at: bin, withIntermediateDirectories: true)
    for (name, body) in tools {
      try Scratch.writeProgram("#!/bin/sh\n" + body + "\n", to: bin.appendingPathComponent(name))
    }
    let path = bin.path + ":" + (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin")
    return (dir, ["PATH": path, "TASKRUN_SLURM_POLL": "0.1"])
  }

  @Test func aJobSlurmForgetsWithoutAStatusIsLostNotSucceeded() throws {
    let (dir, environment) = try fake(["sbatch": "echo 4242", "squeue": "exit 0", "scancel": "exit 0", "srun": "exit 1"]
    )
    try #"operation { name = "gone", queue = queue { name = "hpc", executor = "slurm" }, sh = "true" }"#
      .write(to: dir.appendingPathComponent("w.lua"), atomically: true, encoding: .utf8)
    let run = Binary.finish(
      try Binary.start(["--progress", "plain", "w.lua"], in: dir, environment: environment), timeout: 30)
    #expect(run.status == 1, "\(run.stdout)\(run.stderr)")
    #expect(run.stderr.contains("lost: Slurm no longer knows job 4242 and it left no status"), "\(run.stderr)")
  }

  @Test func aJobThatEndsInSlurmWithoutRunningFailsWithItsState() throws {
    // Timed out while pending: squeue says TIMEOUT and the wrapper never ran.
    let (dir, environment) = try fake([
      "sbatch": "echo 77", "squeue": "echo '77|TIMEOUT|TimeLimit'",
      "scancel": "exit 0", "srun": "exit 1"
    ])
    try #"operation { name = "late", queue = queue { name = "hpc", executor = "slurm" }, sh = "true" }"#
      .write(to: dir.appendingPathComponent("w.lua"), atomically: true, encoding: .utf8)
    let run = Binary.finish(
      try Binary.start(["--progress", "plain", "w.lua"], in: dir, environment: environment), timeout: 30)
    #expect(run.status == 1)
    #expect(run.stderr.contains("killed by Slurm's time limit (job 77)"), "\(run.stderr)")
  }

  @Test func aJobWaitingInTheClusterQueueSaysSoInEventsAndWhy() throws {
    // Pending until scancelled, as Slurm keeps a job that cannot start yet.
    let marker = Scratch.root.appendingPathComponent("taskrun-cancelled-\(UUID().uuidString)").path
    let (dir, environment) = try fake([
      "sbatch": "echo 55",
      "squeue": "[ -f \(marker) ] && echo '55|CANCELLED|None|' || echo '55|PENDING|Resources|'",
      "scancel": "touch \(marker)", "srun": "exit 1"
    ])
    try """
    local big = operation { name = "big", queue = queue { name = "hpc", executor = "slurm" }, timeout = 1, sh = "true" }
    operation { name = "watch", run = function() sleep(0.6) print(big:why()) end }
    """.write(to: dir.appendingPathComponent("w.lua"), atomically: true, encoding: .utf8)
    let run = Binary.finish(
      try Binary.start(
        ["--progress", "plain", "-k", "--events", "events.ndjson", "w.lua"], in: dir,
        environment: environment), timeout: 30)
    #expect(
      run.stdout.contains("'big' is executing: queued on slurm as job 55 (Resources)"), "\(run.stdout)\(run.stderr)")
    let events = try String(contentsOf: dir.appendingPathComponent("events.ndjson"), encoding: .utf8)
    #expect(
      events.contains(
        #""event":"job","operation":"big","executor":"slurm","job_id":"55","state":"queued","reason":"Resources","node":null"#
      ),
      "\(events)")
    #expect(
      run.stderr.contains("FAILED    big") && run.stderr.contains("timed out after 1 s"), "taskrun's timeout cancels it"
    )
  }

  @Test func aQueuedJobsDurationStartsWhenItRunsAndASlurmQueueTakes100AtOnce() throws {
    // The fake runs the job a second after sbatch, squeue says PENDING until then.
    let mark = Scratch.root.appendingPathComponent("taskrun-started-\(UUID().uuidString)").path
    let (dir, environment) = try fake([
      "sbatch":
        "while [ \"${1#--}\" != \"$1\" ]; do shift; done\n( sleep 1; touch \(mark); sh \"$@\" ) >/dev/null 2>&1 &\necho 66",
      "squeue": "[ -f \(mark) ] && echo '66|RUNNING|None|fakenode' || echo '66|PENDING|Priority|'",
      "scancel": "exit 0", "srun": "exit 1"
    ])
    try """
    local hpc = queue { name = "hpc", executor = "slurm" }
    operation { name = "queued", queue = hpc, sh = "sleep 0.5" }
    operation { name = "limit", run = function() print("max_concurrent " .. hpc.max_concurrent) end }
    """.write(to: dir.appendingPathComponent("w.lua"), atomically: true, encoding: .utf8)
    let run = Binary.finish(
      try Binary.start(
        ["--progress", "plain", "--events", "events.ndjson", "w.lua"], in: dir,
        environment: environment), timeout: 30)
    #expect(run.status == 0, "\(run.stdout)\(run.stderr)")
    #expect(run.stdout.contains("max_concurrent 100"))
    let events = try String(contentsOf: dir.appendingPathComponent("events.ndjson"), encoding: .utf8).split(
      separator: "\n"
    )
    .compactMap { try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
    let finish = events.first { $0["event"] as? String == "op_finish" && $0["operation"] as? String == "queued" }
    let duration = finish?["duration"] as? Double ?? -1
    let end = finish?["time"] as? Double ?? 0
    #expect(
      end > 1.2 && duration > 0.4 && duration < end - 0.5,
      "counted from the job's start, not its submission: \(String(describing: finish))")
    #expect(
      events.contains {
        $0["event"] as? String == "job" && $0["state"] as? String == "running" && $0["node"] as? String == "fakenode"
      })
  }

  @Test func aJobThatStartsAndEndsBetweenTwoPollsCountsItsDurationFromItsStart() throws {
    // Pending for 1.5 s, then it runs 0.3 s; squeue never shows it running (it ran between
    // two polls a second apart) and says COMPLETED once it is done.
    let done = Scratch.root.appendingPathComponent("taskrun-done-\(UUID().uuidString)").path
    let (dir, environment) = try fake([
      "sbatch":
        "while [ \"${1#--}\" != \"$1\" ]; do shift; done\n( sleep 1.5; sh \"$@\"; touch \(done) ) >/dev/null 2>&1 &\necho 67",
      "squeue": "[ -f \(done) ] && echo '67|COMPLETED|None|fakenode' || echo '67|PENDING|Priority|'",
      "scancel": "exit 0", "srun": "exit 1"
    ])
    try #"operation { name = "quick", queue = queue { name = "hpc", executor = "slurm" }, sh = "sleep 0.3" }"#
      .write(to: dir.appendingPathComponent("w.lua"), atomically: true, encoding: .utf8)
    let run = Binary.finish(
      try Binary.start(
        ["--progress", "plain", "--events", "events.ndjson", "w.lua"], in: dir,
        environment: environment.merging(["TASKRUN_SLURM_POLL": "1"]) { $1 }),
      timeout: 60)
    #expect(run.status == 0, "\(run.stdout)\(run.stderr)")
    let events = try String(contentsOf: dir.appendingPathComponent("events.ndjson"), encoding: .utf8).split(
      separator: "\n"
    )
    .compactMap { try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
    let finish = events.first { $0["event"] as? String == "op_finish" && $0["operation"] as? String == "quick" }
    let duration = finish?["duration"] as? Double ?? -1
    let end = finish?["time"] as? Double ?? 0
    #expect(end > 1.7, "it waited in the queue: \(String(describing: finish))")
    #expect(
      duration >= 0.25 && duration < 1.2,
      "counted from the job's start, not its submission: \(String(describing: finish))")
    #expect(events.contains { $0["event"] as? String == "job" && $0["state"] as? String == "running" })
  }

  @Test func aJobsOutputIsCutIntoLinesAsACommandsIsHere() throws {
    // The fake runs the wrapper at once, as a node would; its output files are read as it writes them.
    let (dir, environment) = try fake([
      "sbatch": "while [ \"${1#--}\" != \"$1\" ]; do shift; done\n( sh \"$@\" ) >/dev/null 2>&1 &\necho 88",
      "squeue": "echo '88|RUNNING|None|fakenode'", "scancel": "exit 0", "srun": "exit 1"
    ])
    try """
    local hpc = queue { name = "hpc", executor = "slurm" }
    operation { name = "meter", queue = hpc, progress = "(%d+)%%",
      sh = "printf 'one\\\\r\\\\n  10%%\\\\r  50%%\\\\r'; sleep 1.5; printf ' 90%%\\\\r100%%\\\\nno end'" }
    """.write(to: dir.appendingPathComponent("w.lua"), atomically: true, encoding: .utf8)
    let run = Binary.finish(
      try Binary.start(
        ["--progress", "plain", "--events", "events.ndjson", "w.lua"], in: dir,
        environment: environment), timeout: 30)
    #expect(run.status == 0, "\(run.stdout)\(run.stderr)")
    let events = try String(contentsOf: dir.appendingPathComponent("events.ndjson"), encoding: .utf8).split(
      separator: "\n"
    )
    .compactMap { try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
    let outputs = events.filter { $0["event"] as? String == "output" }.map { "\($0["text"]!)" }
    #expect(
      outputs == ["one\n", "100%\n", "no end\n"],
      "CRLF ends a line, an overwritten line shows its last stretch, the last line is ended")
    let finish = events.first { $0["event"] as? String == "op_finish" }?["time"] as? Double ?? 0
    let halfway = events.first { $0["event"] as? String == "progress" && ($0["completed"] as? Int) == 50 }
    #expect(
      (halfway?["time"] as? Double ?? .infinity) < finish - 0.5, "the meter's progress arrived before its line ended")
  }

  @Test func slurmsToolsStartWithNoSignalBlockedInAGroupOfTheirOwn() throws {
    // What sbatch starts (a local wrapper, an emulator) inherits its mask: the job would
    // never see SIGCHLD, and a shell's `wait` in it would wait forever.
    let (dir, environment) = try fake([
      // Read by the shell itself (builtins only): while it waits for a child, dash blocks signals.
      "sbatch":
        #"while IFS= read -r line; do case $line in Sig[BI][lg]*) echo "$line";; esac; done < /proc/$$/status > signals.txt; "#
        + #"read -r stat < /proc/$$/stat; set -- $stat; echo "$$ $5" > group.txt; exit 1"#,
      "squeue": "exit 0", "scancel": "exit 0", "srun": "exit 1"
    ])
    try #"operation { name = "x", queue = queue { name = "hpc", executor = "slurm" }, sh = "true" }"#
      .write(to: dir.appendingPathComponent("w.lua"), atomically: true, encoding: .utf8)
    let run = Binary.finish(
      try Binary.start(["--progress", "plain", "w.lua"], in: dir, environment: environment), timeout: 30)
    #expect(run.status == 1, "sbatch failed on purpose: \(run.stderr)")
    let signals = try String(contentsOf: dir.appendingPathComponent("signals.txt"), encoding: .utf8)
    let masks = signals.split(separator: "\n").map { UInt64($0.split(separator: "\t").last ?? "", radix: 16) }
    #expect(masks.count == 2 && masks[0] == 0, "nothing blocked: \(signals)")
    // The standard signals at their default; glibc keeps 32 and 33 to itself (the test
    // runner starts taskrun with them ignored, and posix_spawn cannot change them).
    #expect(masks.count == 2 && masks[1].map { $0 & 0x7fff_ffff } == 0, "nothing ignored: \(signals)")
    let group = try String(contentsOf: dir.appendingPathComponent("group.txt"), encoding: .utf8).split(separator: " ")
    #expect(
      group.count == 2 && group[0] == group[1].trimmingCharacters(in: .whitespacesAndNewlines),
      "it leads its own process group: the terminal's Ctrl-C goes to taskrun only (\(group))")
  }

  @Test func theSecondCtrlCLetsTheScancelOfTheFirstFinish() throws {
    // The fake job runs nowhere (a wrapper run here would be taskrun's descendant, which the
    // second Ctrl-C kills); scancel takes a second, then ends it as Slurm's TERM would, by
    // its status file. Each scancel that began must finish.
    let (dir, environment) = try fake([
      "sbatch": "while [ \"${1#--}\" != \"$1\" ]; do shift; done\necho \"$2\" > job.dir\necho 99",
      "squeue": "echo '99|RUNNING|None|fakenode'",
      "scancel":
        "echo begun >> scancel.log; sleep 1; echo 143 > \"$(cat job.dir)/status\"; echo finished >> scancel.log",
      "srun": "exit 1"
    ])
    try #"operation { name = "long", queue = queue { name = "hpc", executor = "slurm" }, sh = "sleep 30" }"#
      .write(to: dir.appendingPathComponent("w.lua"), atomically: true, encoding: .utf8)
    let started = try Binary.start(["--progress", "plain", "w.lua"], in: dir, environment: environment)
    func waitFor(_ name: String) {
      let deadline = Date().addingTimeInterval(20)
      while Date() < deadline, !FileManager.default.fileExists(atPath: dir.appendingPathComponent(name).path) {
        usleep(20_000)
      }
    }
    waitFor("job.dir")
    kill(started.child.pid, SIGINT)
    waitFor("scancel.log")
    kill(started.child.pid, SIGINT)
    let run = Binary.finish(started, timeout: 30)
    #expect(run.status == 130, "\(run.stdout)\(run.stderr)")
    let log = (try? String(contentsOf: dir.appendingPathComponent("scancel.log"), encoding: .utf8)) ?? ""
    let lines = log.split(separator: "\n")
    #expect(
      !lines.isEmpty && lines.filter { $0 == "begun" }.count == lines.filter { $0 == "finished" }.count,
      "no scancel was killed midway: \(log)")
  }

  @Test func sbatchRefusingAJobIsACommandThatCouldNotStart() throws {
    let (dir, environment) = try fake([
      "sbatch": "echo 'sbatch: error: invalid partition specified: nope' >&2; exit 1",
      "squeue": "exit 0", "scancel": "exit 0", "srun": "exit 1"
    ])
    try
      #"operation { name = "x", queue = queue { name = "hpc", executor = "slurm", slurm = { partition = "nope" } }, sh = "true" }"#
      .write(to: dir.appendingPathComponent("w.lua"), atomically: true, encoding: .utf8)
    let run = Binary.finish(
      try Binary.start(["--progress", "plain", "w.lua"], in: dir, environment: environment), timeout: 30)
    #expect(run.status == 1)
    #expect(
      run.stderr.contains("could not start (sbatch: sbatch: error: invalid partition specified: nope)"), "\(run.stderr)"
    )
  }
}

@Suite struct SlurmUsageTests {
  @Test func withoutSlurmsToolsASlurmQueueIsAUsageErrorThatSaysWhy() throws {
    let dir = Scratch.root.appendingPathComponent("taskrun-noalloc-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
    try #"queue { name = "hpc", executor = "slurm" }"#.write(
      to: dir.appendingPathComponent("w.lua"), atomically: true, encoding: .utf8)
    let run = Binary.finish(try Binary.start(["w.lua"], in: dir, environment: ["PATH": "/nonexistent"]), timeout: 30)
    #expect(run.status == 2)
    #expect(run.stderr.contains("queue 'hpc': executor 'slurm' needs Slurm's tools"), "\(run.stderr)")
    let bad = try Binary.run(["--executor", "cloud", "w.lua"], in: dir)
    #expect(bad.status == 2)
    try #"queue { name = "hpc", executor = "slurm", slurm = { mem = "lots" } }"#.write(
      to: dir.appendingPathComponent("w.lua"), atomically: true, encoding: .utf8)
    let mem = try Binary.run(["--executor", "local", "w.lua"], in: dir)
    #expect(mem.status == 2 && mem.stderr.contains("mem must be a number of megabytes"), "\(mem.stderr)")
    // What Slurm accepts (digits, one unit letter; minutes or [days-]hours:minutes:seconds).
    for (field, value, accepted) in [
      ("mem", "4096", true), ("mem", "4G", true), ("mem", "G", false), ("mem", "12KK", false),
      ("mem", "-5", false), ("mem", "1\u{301}", false), ("mem", "１２", false),
      ("time", "30", true), ("time", "1-00:00:00", true), ("time", "1h", false), ("time", "", false)
    ] {
      try #"queue { name = "hpc", executor = "slurm", slurm = { \#(field) = "\#(value)" } }"#
        .write(to: dir.appendingPathComponent("w.lua"), atomically: true, encoding: .utf8)
      let run = try Binary.run(["--executor", "local", "w.lua"], in: dir)
      #expect((run.status == 0) == accepted, "\(field) = \(value.debugDescription): \(run.status) \(run.stderr)")
    }
  }
}
