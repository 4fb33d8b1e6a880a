// SlurmSteps: the steps of a run in the allocation taskrun runs in, as squeue lists them,
// and the state of that allocation: what ending a run's steps, and explaining one Slurm
// ended, ask of the cluster.
import FoundationEssentials
import Glibc

extension Slurm {
  /// The ids of the steps named `name` in the job `job` that squeue lists (running, or
  /// still being cleaned up after their processes ended); nil when squeue did not answer.
  static func steps(named name: String, inJob job: String) -> [String]? {
    let (status, output) = capture(["squeue", "-s", "-h", "-j", job, "-o", "%i|%j"], within: 10)
    guard status == 0 else { return nil }
    return output.split(separator: "\n").compactMap { line -> String? in
      let parts = line.split(separator: "|", maxSplits: 1)
      return parts.count == 2 && parts[1] == name ? String(parts[0]) : nil
    }
  }

  /// Waits until squeue lists no step named `name` in the job `job` (a cancelled step stays
  /// in Slurm's table, holding its CPUs, until slurmstepd has ended its processes), at most
  /// `seconds`. Returns whether none is left.
  @discardableResult
  public static func awaitSteps(named name: String, inJob job: String, within seconds: Double) -> Bool {
    let deadline = Date().addingTimeInterval(seconds)
    var pause = 0.05
    while true {
      guard let steps = steps(named: name, inJob: job) else { return false }
      if steps.isEmpty { return true }
      guard Date() < deadline else { return false }
      usleep(UInt32(pause * 1_000_000))
      pause = min(pause * 2, 0.5)
    }
  }

  /// The state of the job `job` as squeue shows it (`RUNNING`, `TIMEOUT`, …); nil when
  /// squeue does not answer within 5 s or no longer knows the job.
  static func jobState(_ job: String) -> String? {
    let (status, output) = capture(["squeue", "-h", "-t", "all", "-j", job, "-o", "%T"], within: 5)
    guard status == 0 else { return nil }
    let state = output.split(separator: "\n").first.map(String.init) ?? ""
    return state.isEmpty ? nil : state
  }
}
