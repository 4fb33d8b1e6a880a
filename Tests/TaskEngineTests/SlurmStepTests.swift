// The Slurm step launcher without a cluster: srun's argv, its own lines dropped, Slurm's reasons.
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
