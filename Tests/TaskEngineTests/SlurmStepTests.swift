// The Slurm step launcher: srun's argv, its own lines dropped, Slurm's reasons, the wrapper run here, and (with a cluster) a run's steps cancelled.
import Foundation
import Testing
@testable import TaskEngine

@Suite struct SlurmStepTests {
  func executor(_ placement: SlurmPlacement = SlurmPlacement()) -> SlurmStepExecutor {
    SlurmStepExecutor(processes: ProcessRunner(inbox: Inbox()), placement: placement, tag: "taskrun.test")
  }

  @Test func aCommandBecomesAStepWithTheQueuesPlacement() {
    var placement = SlurmPlacement()
    placement.partition = "long"
    placement.cpus = 4
    placement.memory = "2G"
    placement.time = "10"
    placement.extra = ["--constraint=avx512"]
    let argv = executor(placement).stepArguments(CommandSpec(.shell("make -j4")))
    #expect(Array(argv.prefix(12)) == ["srun", "--quiet", "--exact", "--ntasks=1", "--nodes=1", "--job-name=taskrun.test",
                                       "--partition=long", "--cpus-per-task=4", "--mem=2G", "--time=10",
                                       "--constraint=avx512", "/bin/sh"])
    #expect(Array(argv.suffix(3)) == ["taskrun-job", "make", "-j4"], "the wrapper, then the command's own argv")
  }

  @Test func srunsOwnLinesAreNotTheCommandsOutput() {
    let text = "real error\nsrun: error: vm: task 0: Exited with exit code 3\nslurmstepd-vm: error: *** STEP 4.0 ON vm CANCELLED AT 2026-11-24T09:25:30 ***\nmore\n"
    #expect(executor().shown(text, stream: .stderr) == "real error\nmore\n")
    #expect(executor().shown("srun: looks like srun but is stdout\n", stream: .stdout) == "srun: looks like srun but is stdout\n")
  }

  @Test func aStepSlurmEndedFailsWithSlurmsReason() {
    let cancelled = executor().finished(CommandResult(status: 137, stdout: "",
      stderr: "slurmstepd-vm: error: *** STEP 4.0 ON vm CANCELLED AT 2026-11-24T09:25:30 ***\nsrun: error: vm: task 0: Killed\n"))
    #expect(cancelled.failureDescription == "cancelled in Slurm (step 4.0 on vm)")
    #expect(cancelled.stderr.isEmpty)
    let late = executor().finished(CommandResult(status: 137, stdout: "",
      stderr: "slurmstepd-vm: error: *** STEP 7.2 ON c12 CANCELLED AT 2026-11-24T10:00:00 DUE TO TIME LIMIT ***\n"))
    #expect(late.failureDescription == "killed by Slurm's time limit (step 7.2 on c12)")
    let plain = executor().finished(CommandResult(status: 3, stdout: "", stderr: "bad\nsrun: error: vm: task 0: Exited with exit code 3\n"))
    #expect(plain.failureDescription == "exited with status 3" && plain.stderr == "bad\n", "the command's own status and output")
  }
}

/// The step wrapper is plain sh: run here, with USR1 (what srun forwards for a stop) sent at
/// every moment of its start, it must leave nothing running.
@Suite struct SlurmStepWrapperTests {
  func alive(_ pid: pid_t) -> Bool {
    guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8) else { return false }
    return stat.split(separator: ")").last?.split(separator: " ").first != "Z"
  }

  @Test func aStopAtAnyMomentOfTheStartStopsTheCommand() throws {
    let dir = FileManager.default.temporaryDirectory.appendingPathComponent("taskrun-wrapper-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: dir) }
    for delay in stride(from: 0, to: 30_000, by: 500) {  // µs after the wrapper starts
      let pidFile = dir.appendingPathComponent("pid-\(delay)").path
      // As slurmstepd starts it: every signal at its default and none blocked (this test
      // process may ignore USR1, and sh cannot trap a signal ignored when it started).
      let argv = ["/bin/sh", "-c", SlurmStepExecutor.wrapper, "taskrun-job", "sh", "-c", "echo $$ > '\(pidFile)'; exec sleep 30"]
      var attributes = posix_spawnattr_t()
      posix_spawnattr_init(&attributes)
      defer { posix_spawnattr_destroy(&attributes) }
      var all = sigset_t(), none = sigset_t()
      sigfillset(&all)
      sigemptyset(&none)
      posix_spawnattr_setsigdefault(&attributes, &all)
      posix_spawnattr_setsigmask(&attributes, &none)
      posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK))
      let environment: [String] = ["PATH=/usr/bin:/bin", "TASKRUN_GRACE=1"]
      let cArgv: [UnsafeMutablePointer<CChar>?] = argv.map { strdup($0) } + [nil]
      let cEnv: [UnsafeMutablePointer<CChar>?] = environment.map { strdup($0) } + [nil]
      defer { (cArgv + cEnv).forEach { free($0) } }
      var pid: pid_t = 0
      try #require(posix_spawn(&pid, "/bin/sh", nil, &attributes, cArgv, cEnv) == 0)
      usleep(useconds_t(delay))
      kill(pid, SIGUSR1)
      var status: Int32 = 0, running = true
      let deadline = Date().addingTimeInterval(5)
      while Date() < deadline {
        if waitpid(pid, &status, WNOHANG) == pid { running = false; break }
        usleep(5_000)
      }
      if running { kill(pid, SIGKILL); _ = waitpid(pid, &status, 0) }
      let command = (try? String(contentsOfFile: pidFile, encoding: .utf8)).flatMap { pid_t($0.trimmingCharacters(in: .whitespacesAndNewlines)) }
      var commandAlive = command.map(alive) ?? false
      for _ in 0..<200 where commandAlive { usleep(10_000); commandAlive = alive(command!) }
      if let command, commandAlive { kill(command, SIGKILL) }
      #expect(!running && !commandAlive, "USR1 \(delay) µs after the start: wrapper \(running ? "still running" : "ended"), command \(commandAlive ? "still running" : "gone")")
    }
  }
}

/// With a cluster (scripts/slurm-up): the steps of a run are cancelled by their name, and
/// only they.
@Suite struct SlurmCancelStepsTests {
  static let cluster = Slurm.missingTools().isEmpty && Slurm.capture(["sinfo", "-h"], within: 10).0 == 0

  func steps(_ job: String) -> [String] {
    Slurm.capture(["squeue", "-s", "-h", "-j", job, "-o", "%j"], within: 10).1.split(separator: "\n").map(String.init)
  }

  @Test(.enabled(if: cluster, "no Slurm cluster answers (scripts/slurm-up starts one, as root)"))
  func theRunsStepsAreCancelledAndNoOther() throws {
    let (status, output) = Slurm.capture(["salloc", "--no-shell", "-n2", "--job-name=taskrun-tests", "--time=5"], within: 60)
    let job = try #require(output.firstMatch(of: /allocation (\d+)/).map { String($0.1) }, "salloc: \(status) \(output)")
    defer { _ = Slurm.run(["scancel", job], within: 10) }
    var sruns: [Process] = []
    for name in ["taskrun.ours", "someone.else"] {
      let srun = Process()
      srun.executableURL = URL(fileURLWithPath: "/usr/bin/srun")
      srun.arguments = ["--jobid=\(job)", "--quiet", "--exact", "--ntasks=1", "--job-name=\(name)", "sleep", "60"]
      srun.standardOutput = FileHandle.nullDevice
      srun.standardError = FileHandle.nullDevice
      try srun.run()
      sruns.append(srun)
    }
    defer { for srun in sruns where srun.isRunning { kill(srun.processIdentifier, SIGKILL) } }
    var deadline = Date().addingTimeInterval(30)
    while Date() < deadline, Set(steps(job)) != ["taskrun.ours", "someone.else"] { usleep(100_000) }
    try #require(Set(steps(job)) == ["taskrun.ours", "someone.else"], "the steps started: \(steps(job))")
    Slurm.cancelSteps(named: "taskrun.ours", inJob: job)
    deadline = Date().addingTimeInterval(15)
    while Date() < deadline, steps(job).contains("taskrun.ours") || sruns[0].isRunning { usleep(100_000) }
    #expect(!steps(job).contains("taskrun.ours") && !sruns[0].isRunning, "the run's step is gone")
    #expect(steps(job).contains("someone.else") && sruns[1].isRunning, "another step of the allocation is left alone")
  }
}
