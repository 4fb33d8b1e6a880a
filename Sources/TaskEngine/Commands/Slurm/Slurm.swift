// Slurm: the cluster's command-line tools as taskrun calls them (never --json, never libslurm).
import CSpawn
import FoundationEssentials
import Glibc

public enum Slurm {
  /// Whether taskrun runs inside an allocation (then commands are job steps).
  public static var insideAllocation: Bool { Environment.variable("SLURM_JOB_ID") != nil }

  /// Whether srun, sbatch, squeue and scancel are on PATH.
  public static func missingTools() -> [String] {
    let folders = (Environment.variable("PATH") ?? "").split(separator: ":")
    return ["srun", "sbatch", "squeue", "scancel"].filter { tool in
      !folders.contains { access("\($0)/\(tool)", X_OK) == 0 }
    }
  }

  /// A name for this run's jobs: `scancel --name` and `squeue --name` find them all.
  /// `--nice=N` for a command with a lower quality of service: Slurm's own niceness (a
  /// lower scheduling priority in the cluster's queue), which needs no privilege when positive.
  static func niceOptions(_ qos: QualityOfService?) -> [String] {
    guard let delta = qos?.niceDelta, delta > 0 else { return [] }
    return ["--nice=\(delta * 100)"]
  }

  public static func runTag() -> String {
    "taskrun.\(getpid()).\(UInt32.random(in: 0...UInt32.max))"
  }

  /// Cancels every job named `name`: scancel, waited for (at most 10 s).
  public static func cancel(name: String) {
    _ = run(["scancel", "--quiet", "--name=\(name)"], within: 10)
  }

  /// Cancels every step named `name` of the job `job` (the allocation taskrun runs in) and
  /// no other. `scancel --name` matches job names only: the steps are found with squeue and
  /// cancelled by id.
  public static func cancelSteps(named name: String, inJob job: String) {
    guard let steps = steps(named: name, inJob: job), !steps.isEmpty else { return }
    _ = run(["scancel", "--quiet"] + steps, within: 10)
  }

  /// Runs a Slurm tool (found on PATH), output to `output` (stdout and stderr); its exit
  /// status, or nil if it could not start or took longer than `seconds` (then it is killed).
  /// Spawned and reaped here: taskrun's signals are handled by its own watcher, not by
  /// Foundation's Process. It starts as a command does (`cs_spawn`): every signal unblocked
  /// and at its default, none of the descriptors taskrun or Lua opened, in a process group of
  /// its own (Ctrl-C is taskrun's to handle: the scancel it runs then must finish, and the
  /// second Ctrl-C's sweep of strays spares it: `ProcessRunner.waitedFor`).
  static func run(
    _ argv: [String], within seconds: Double, output: String = "/dev/null",
    environment: [String: String] = [:]
  ) -> Int32? {
    var program = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
    guard cs_resolve(argv[0], getenv("PATH"), &program, program.count) == 0 else { return nil }
    let out = open(output, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
    guard out >= 0 else { return nil }
    defer { close(out) }
    let env = mergedEnvironment(environment)
    var pid: pid_t = 0, pidfd: Int32 = -1
    let rc = withCStrings(argv) { cArgv in
      withOptionalCStrings(env) { cEnv in
        ProcessRunner.waitedFor.withLock { waited in
          let rc = cs_spawn(program, cArgv, cEnv, nil, out, out, &pid, &pidfd)
          if rc == 0 { waited.insert(pid) }
          return rc
        }
      }
    }
    guard rc == 0 else { return nil }
    defer {
      if pidfd >= 0 { close(pidfd) }
      _ = ProcessRunner.waitedFor.withLock { $0.remove(pid) }
    }
    let deadline = Date().addingTimeInterval(seconds)
    var status: Int32 = 0, killed = false
    while true {
      let late = Date() > deadline
      // Sweeps reap under the lock and take the pid out: while it is held and the pid is
      // in, the id is ours.
      let reaped: pid_t? = ProcessRunner.waitedFor.withLock { waited in
        guard waited.contains(pid) else { return nil }  // reaped by the run's last sweep
        var reaped: pid_t
        repeat { reaped = waitpid(pid, &status, WNOHANG) } while reaped < 0 && errno == EINTR
        if reaped == 0 && late && !killed { killed = kill(pid, SIGKILL) == 0 }
        return reaped
      }
      guard let reaped, reaped >= 0 else { return nil }
      if reaped == pid { break }
      // The pidfd becomes readable at the exit (without one: look again in 5 ms).
      var exit = pollfd(fd: pidfd, events: Int16(POLLIN), revents: 0)
      _ = cs_poll(&exit, 1, pidfd < 0 ? 0.005 : min(max(deadline.timeIntervalSinceNow, 0.005), 1))
    }
    if killed { return nil }
    return (status & 0x7f) == 0 ? (status >> 8) & 0xff : 128 + (status & 0x7f)
  }

  /// Runs a Slurm tool and returns its status (-1: it did not run) and its output.
  static func capture(_ argv: [String], environment: [String: String] = [:], within seconds: Double = 30) -> (
    Int32, String
  ) {
    let file = temporaryDirectory + "taskrun-slurm-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
    defer { unlink(file) }
    let status = run(argv, within: seconds, output: file, environment: environment) ?? -1
    let text = (try? String(contentsOfFile: file, encoding: .utf8)) ?? ""
    return (status, status == -1 && text.isEmpty ? "\(argv[0]) could not run" : text)
  }

  /// State and reason of every job named `name`, by job id: one squeue for all of them
  /// (`-t all`: finished jobs too, while Slurm keeps them).
  static func states(name: String) -> [String: (state: String, reason: String, node: String)] {
    states(["--name=\(name)"])
  }

  /// The states of jobs by id (those of an earlier run, whose name is not this run's).
  static func states(ids: [String]) -> [String: (state: String, reason: String, node: String)] {
    states(["--jobs=\(ids.joined(separator: ","))"])
  }

  private static func states(_ filter: [String]) -> [String: (state: String, reason: String, node: String)] {
    let (status, output) = capture(["squeue", "-h", "-t", "all"] + filter + ["-o", "%i|%T|%r|%N"], within: 15)
    guard status == 0 else { return [:] }
    var states: [String: (state: String, reason: String, node: String)] = [:]
    for line in output.split(separator: "\n") {
      let parts = line.split(separator: "|", omittingEmptySubsequences: false).map(String.init)
      if parts.count >= 3 { states[parts[0]] = (parts[1], parts[2], parts.count > 3 ? parts[3] : "") }
    }
    return states
  }

  /// Whether a job in `state` will not run any more.
  static func ended(_ state: String) -> Bool {
    !["PENDING", "RUNNING", "CONFIGURING", "COMPLETING", "REQUEUED", "RESIZING", "SUSPENDED", "STAGE_OUT", "SIGNALING"]
      .contains(state)
  }

  /// Why a job Slurm ended failed, in the words of a local failure.
  static func reason(state: String, id: String, stopping: Bool) -> String {
    switch state {
    case "TIMEOUT": return "killed by Slurm's time limit (job \(id))"
    case "OUT_OF_MEMORY": return "out of memory (Slurm, job \(id))"
    case "CANCELLED": return stopping ? "cancelled" : "cancelled in Slurm (job \(id))"
    case "NODE_FAIL", "BOOT_FAIL", "PREEMPTED": return "lost: Slurm ended job \(id) (\(state.lowercased()))"
    case "COMPLETED": return "lost: job \(id) completed without a status (its folder is not shared with the nodes?)"
    default: return "ended in Slurm as \(state.lowercased()) (job \(id))"
    }
  }
}
