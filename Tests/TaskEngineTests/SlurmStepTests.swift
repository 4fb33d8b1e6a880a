// The Slurm step launcher: srun's argv, its own lines dropped, Slurm's reasons, the wrapper run here, and (with a cluster) a run's steps cancelled.
import Foundation
import TestSupport
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
    #expect(
      Array(argv.prefix(12)) == [
        "srun", "-v", "--exact", "--ntasks=1", "--nodes=1", "--job-name=taskrun.test",
        "--partition=long", "--cpus-per-task=4", "--mem=2G", "--time=10",
        "--constraint=avx512", "/bin/sh"
      ])
    #expect(Array(argv.suffix(3)) == ["taskrun-job", "make", "-j4"], "the wrapper, then the command's own argv")
  }

  @Test func aSlurmToolsStatusIsItsExitAndOneThatOutstaysItsTimeIsKilled() throws {
    #expect(Slurm.run(["sh", "-c", "exit 3"], within: 5) == 3)
    let file = Scratch.root.appendingPathComponent("tool-\(UUID().uuidString)").path
    let begun = Date()
    #expect(Slurm.run(["sh", "-c", "echo $$ > \(file); exec sleep 30"], within: 0.3) == nil, "timed out")
    #expect(Date().timeIntervalSince(begun) < 10)
    let pid =
      pid_t((try String(contentsOfFile: file, encoding: .utf8)).trimmingCharacters(in: .whitespacesAndNewlines)) ?? 0
    #expect(pid > 0 && kill(pid, 0) != 0 && errno == ESRCH, "killed and reaped")
  }

  @Test func aSlurmToolGetsNoDescriptorOpenedSinceStartAndNoBlockedSignal() throws {
    let file = Scratch.root.appendingPathComponent("held-\(UUID().uuidString)").path
    let held = open(file, O_WRONLY | O_CREAT, 0o600)  // inheritable, as what Lua's io.open opens
    #expect(held > 2)
    defer { close(held); unlink(file) }
    var term = sigset_t(), old = sigset_t()
    sigemptyset(&term)
    sigaddset(&term, SIGTERM)
    pthread_sigmask(SIG_BLOCK, &term, &old)  // the caller's mask is not the tool's
    let (status, output) = Slurm.capture([
      "sh", "-c",
      "if [ -e /proc/$$/fd/\(held) ]; then echo held; else echo closed; fi; exec grep SigBlk /proc/self/status"
    ])
    pthread_sigmask(SIG_SETMASK, &old, nil)
    #expect(status == 0)
    #expect(output.hasPrefix("closed\n"), "\(output)")
    #expect(output.contains("SigBlk:\t0000000000000000"), "\(output)")
  }

  @Test func srunsOwnLinesAreNotTheCommandsOutput() {
    let text =
      "real error\nsrun: error: vm: task 0: Exited with exit code 3\nslurmstepd-vm: error: *** STEP 4.0 ON vm CANCELLED AT 2026-11-24T09:25:30 ***\nmore\n"
    #expect(executor().shown(text, stream: .stderr) == "real error\nmore\n")
    #expect(
      executor().shown("srun: looks like srun but is stdout\n", stream: .stdout)
        == "srun: looks like srun but is stdout\n")
  }

  @Test func aStepSlurmEndedFailsWithSlurmsReason() {
    let cancelled = executor().finished(
      CommandResult(
        status: 137, stdout: "",
        stderr:
          "slurmstepd-vm: error: *** STEP 4.0 ON vm CANCELLED AT 2026-11-24T09:25:30 ***\nsrun: error: vm: task 0: Killed\n"
      ))
    #expect(cancelled.failureDescription == "cancelled in Slurm (step 4.0 on vm)")
    #expect(cancelled.stderr.isEmpty)
    let late = executor().finished(
      CommandResult(
        status: 137, stdout: "",
        stderr: "slurmstepd-vm: error: *** STEP 7.2 ON c12 CANCELLED AT 2026-11-24T10:00:00 DUE TO TIME LIMIT ***\n"))
    #expect(late.failureDescription == "killed by Slurm's time limit (step 7.2 on c12)")
    let plain = executor().finished(
      CommandResult(status: 3, stdout: "", stderr: "bad\nsrun: error: vm: task 0: Exited with exit code 3\n"))
    #expect(
      plain.failureDescription == "exited with status 3" && plain.stderr == "bad\n",
      "the command's own status and output")
  }

  /// srun drops slurmstepd's CANCELLED line once it hears its task was killed: srun's own
  /// lines (it runs with -v) still say which step Slurm ended, and the job's state says why.
  @Test func srunsOwnAccountGivesTheReasonWhenSlurmstepdsLineIsLost() {
    let launched = "srun: launching StepId=4.2 on host vm, 1 tasks: 0\n"
    let killed = SrunAccount(launched + "srun: error: vm: task 0: Killed\n")
    #expect(killed.step == "4.2" && killed.node == "vm" && killed.taskKilled && !killed.endedBySlurm)
    #expect(killed.reason { _ in "RUNNING" } == "cancelled in Slurm (step 4.2 on vm)")
    #expect(killed.reason { _ in nil } == "cancelled in Slurm (step 4.2 on vm)", "squeue did not answer")
    #expect(
      killed.reason { $0 == "4" ? "TIMEOUT" : nil } == "killed by Slurm's time limit (job 4)", "the allocation ended")
    let aborted = SrunAccount(launched + "srun: Job step aborted: Waiting up to 32 seconds for job step to finish.\n")
    #expect(aborted.endedBySlurm && aborted.reason { _ in "RUNNING" } == "cancelled in Slurm (step 4.2 on vm)")
    let exited = SrunAccount(launched + "srun: error: vm: task 0: Exited with exit code 137\n")
    #expect(exited.reason { _ in "RUNNING" } == nil, "the command's own KILL is its own status")
    // Aborted before srun heard from its task, srun exits 0: still a failure. (It asks squeue
    // about the job: one no cluster has.)
    let zero = executor().finished(
      CommandResult(
        status: 0, stdout: "running\n",
        stderr:
          "srun: launching StepId=66999999.2 on host vm, 1 tasks: 0\n"
          + "srun: launch/slurm: launch_p_step_launch: StepId=66999999.2 aborted before step completely launched.\n"))
    #expect(zero.status != 0 && zero.failureDescription == "cancelled in Slurm (step 66999999.2 on vm)")
    #expect(zero.stderr.isEmpty, "srun's lines are not the command's output")
  }
}

/// A process started as slurmstepd starts a step's: every signal at its default and none
/// blocked (this test process may block or ignore some, and sh cannot trap a signal ignored
/// when it started), output to /dev/null. Reaped with waitpid, not Foundation's Process.
struct Spawned {
  let pid: pid_t

  init(_ argv: [String], environment: [String]? = nil) throws {
    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }
    posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
    posix_spawn_file_actions_adddup2(&actions, 1, 2)
    let cArgv: [UnsafeMutablePointer<CChar>?] = argv.map { strdup($0) } + [nil]
    let cEnv: [UnsafeMutablePointer<CChar>?]? = environment.map { $0.map { strdup($0) } + [nil] }
    defer { (cArgv + (cEnv ?? [])).forEach { free($0) } }
    var pid: pid_t = 0
    let status = withShellSignals { attributes in
      cEnv.map { posix_spawn(&pid, argv[0], &actions, &attributes, cArgv, $0) }
        ?? posix_spawn(&pid, argv[0], &actions, &attributes, cArgv, environ)
    }
    guard status == 0 else { throw POSIXError(POSIXErrorCode(rawValue: status) ?? .EINVAL) }
    self.pid = pid
  }

  /// Whether it exited within `seconds` (then it is reaped).
  func exited(within seconds: Double) -> Bool {
    var status: Int32 = 0
    let deadline = Date().addingTimeInterval(seconds)
    repeat {
      if waitpid(pid, &status, WNOHANG) == pid { return true }
      usleep(5_000)
    } while Date() < deadline
    return false
  }

  /// Kills it if it still runs, and reaps it.
  func end() {
    guard !exited(within: 0) else { return }
    kill(pid, SIGKILL)
    var status: Int32 = 0
    _ = waitpid(pid, &status, 0)
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
    let dir = Scratch.root.appendingPathComponent("taskrun-wrapper-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: dir) }
    // µs after the wrapper starts: finely over its first 5 ms, where the traps are set up.
    for delay in Array(stride(from: 0, to: 5_000, by: 50)) + Array(stride(from: 5_000, to: 30_000, by: 1_000)) {
      let pidFile = dir.appendingPathComponent("pid-\(delay)").path
      let wrapper = try Spawned(
        [
          "/bin/sh", "-c", SlurmStepExecutor.wrapper, "taskrun-job", "sh", "-c", "echo $$ > '\(pidFile)'; exec sleep 30"
        ],
        environment: ["PATH=/usr/bin:/bin", "TASKRUN_GRACE=1"])
      usleep(useconds_t(delay))
      kill(wrapper.pid, SIGUSR1)
      let running = !wrapper.exited(within: 5)
      if running { wrapper.end() }
      let command = (try? String(contentsOfFile: pidFile, encoding: .utf8)).flatMap {
        pid_t($0.trimmingCharacters(in: .whitespacesAndNewlines))
      }
      var commandAlive = command.map(alive) ?? false
      for _ in 0..<200 where commandAlive { usleep(10_000); commandAlive = alive(command!) }
      if let command, commandAlive { kill(command, SIGKILL) }
      #expect(
        !running && !commandAlive,
        "USR1 \(delay) µs after the start: wrapper \(running ? "still running" : "ended"), command \(commandAlive ? "still running" : "gone")"
      )
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
    let (status, output) = Slurm.capture(
      ["salloc", "--no-shell", "-n2", "--job-name=taskrun-tests", "--time=5"], within: 60)
    let job = try #require(
      output.firstMatch(of: /allocation (\d+)/).map { String($0.1) }, "salloc: \(status) \(output)")
    defer { _ = Slurm.run(["scancel", job], within: 10) }
    let sruns = try ["taskrun.ours", "someone.else"].map { name in
      try Spawned([
        "/usr/bin/srun", "--jobid=\(job)", "--quiet", "--exact", "--ntasks=1", "--job-name=\(name)", "sleep", "60"
      ])
    }
    defer { sruns.forEach { $0.end() } }
    let deadline = Date().addingTimeInterval(30)
    while Date() < deadline, Set(steps(job)) != ["taskrun.ours", "someone.else"] { usleep(100_000) }
    try #require(Set(steps(job)) == ["taskrun.ours", "someone.else"], "the steps started: \(steps(job))")
    Slurm.cancelSteps(named: "taskrun.ours", inJob: job)
    #expect(sruns[0].exited(within: 15) && !steps(job).contains("taskrun.ours"), "the run's step is gone")
    #expect(
      steps(job).contains("someone.else") && !sruns[1].exited(within: 0), "another step of the allocation is left alone"
    )
  }
}
