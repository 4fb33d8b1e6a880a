// SlurmPlacement: what a queue's `slurm = { … }` asks of the cluster for each of its jobs.

/// The resources and account of a Slurm queue's jobs, as srun/sbatch options.
public struct SlurmPlacement: Sendable, Equatable {
  public var partition: String?
  public var account: String?
  /// CPUs per task (`--cpus-per-task`).
  public var cpus: Int?
  /// Memory per job, as Slurm spells it ("4G", "512M").
  public var memory: String?
  /// Time limit, as Slurm spells it ("10", "1:00:00"): a backstop (taskrun enforces
  /// `timeout` itself).
  public var time: String?
  /// Passed through as they are (`{ "--constraint=avx512" }`).
  public var extra: [String] = []

  public init() {}

  /// The options for srun or sbatch.
  public var options: [String] {
    var options: [String] = []
    if let partition { options.append("--partition=\(partition)") }
    if let account { options.append("--account=\(account)") }
    if let cpus { options.append("--cpus-per-task=\(cpus)") }
    if let memory { options.append("--mem=\(memory)") }
    if let time { options.append("--time=\(time)") }
    return options + extra
  }
}
