// Slurm: the cluster's command-line tools as taskrun calls them (never --json, never libslurm).
import Foundation

public enum Slurm {
  /// Whether taskrun runs inside an allocation (then commands are job steps).
  public static var insideAllocation: Bool { ProcessInfo.processInfo.environment["SLURM_JOB_ID"] != nil }

  /// Whether srun, sbatch, squeue and scancel are on PATH.
  public static func missingTools() -> [String] {
    let folders = (ProcessInfo.processInfo.environment["PATH"] ?? "").split(separator: ":")
    return ["srun", "squeue", "scancel"].filter { tool in
      !folders.contains { access("\($0)/\(tool)", X_OK) == 0 }
    }
  }

  /// A name for this run's jobs: `scancel --name` and `squeue --name` find them all.
  public static func runTag() -> String {
    "taskrun.\(getpid()).\(UInt32.random(in: 0...UInt32.max))"
  }

  /// Cancels every job named `name`: scancel, waited for (at most 10 s).
  public static func cancel(name: String) {
    _ = run(["scancel", "--quiet", "--name=\(name)"], within: 10)
  }

  /// Runs a Slurm tool (found on PATH), output discarded; its exit status, or nil if it
  /// could not start or took longer than `seconds` (then it is killed). Spawned and reaped
  /// here: taskrun's signals are handled by its own watcher, not by Foundation's Process.
  static func run(_ argv: [String], within seconds: Double) -> Int32? {
    var pid: pid_t = 0
    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }
    posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
    posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
    let cArgv = argv.map { strdup($0) } + [nil]
    defer { for p in cArgv { free(p) } }
    guard posix_spawnp(&pid, argv[0], &actions, nil, cArgv, environ) == 0 else { return nil }
    let deadline = Date().addingTimeInterval(seconds)
    var status: Int32 = 0
    while waitpid(pid, &status, WNOHANG) == 0 {
      if Date() > deadline {
        kill(pid, SIGKILL)
        _ = waitpid(pid, &status, 0)
        return nil
      }
      usleep(5_000)
    }
    return (status & 0x7f) == 0 ? (status >> 8) & 0xff : 128 + (status & 0x7f)
  }
}
