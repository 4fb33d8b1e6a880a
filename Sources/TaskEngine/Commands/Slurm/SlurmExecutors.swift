// SlurmExecutors: which executor a queue's commands get (this machine's or Slurm's), and making Slurm's.
import FoundationEssentials

/// Why a queue cannot have the Slurm executor it asked for: Slurm's tools are not on PATH.
public struct SlurmUnavailable: Error, CustomStringConvertible {
  public let missing: [String]
  public var description: String {
    "executor 'slurm' needs Slurm's tools, and \(missing.joined(separator: ", ")) are not on PATH"
  }
}

extension Scheduler {
  /// The executor of a queue that asks for `asked` ("local", "slurm"; nil: the run's
  /// default), given the command line's `--executor` (`choice`; `local` runs everything
  /// here): nil for this machine, else the Slurm executor with `placement`.
  public func executor(
    asked: String?, choice: String?, placement: SlurmPlacement,
    tag: String
  ) throws(SlurmUnavailable) -> (any CommandExecutor)? {
    guard Self.runsOnSlurm(asked: asked, choice: choice) else { return nil }
    return try slurmExecutor(placement, tag: tag)
  }

  /// Whether a queue that asks for `asked` runs on Slurm, given `--executor` (`choice`).
  public static func runsOnSlurm(asked: String?, choice: String?) -> Bool {
    choice != "local" && (asked ?? choice) == "slurm"
  }

  /// The Slurm executor for a queue, ended with the run (`use`): a job step per command
  /// inside the allocation taskrun runs in, else a batch job per command, in a folder of the
  /// run on the shared filesystem (TASKRUN_SLURM_DIR, else .taskrun/slurm/ under the current
  /// folder, then `tag`), polled every TASKRUN_SLURM_POLL seconds (0.1 to 60, default 1).
  public func slurmExecutor(_ placement: SlurmPlacement, tag: String) throws(SlurmUnavailable) -> any CommandExecutor {
    let missing = Slurm.missingTools()
    guard missing.isEmpty else { throw SlurmUnavailable(missing: missing) }
    let executor: any CommandExecutor
    if Slurm.insideAllocation {
      executor = SlurmStepExecutor(processes: processes, placement: placement, tag: tag)
    } else {
      let environment = ProcessInfo.processInfo.environment
      let base =
        environment["TASKRUN_SLURM_DIR"].map { URL(fileURLWithPath: $0) }
        ?? URL(fileURLWithPath: FileManager.default.currentDirectoryPath).appendingPathComponent(".taskrun/slurm")
      let interval = environment["TASKRUN_SLURM_POLL"].flatMap(Double.init).map { min(60, max(0.1, $0)) } ?? 1
      executor = SlurmBatchExecutor(
        inbox: inbox, placement: placement, tag: tag,
        folder: base.appendingPathComponent(tag), interval: interval)
    }
    use(executor)
    return executor
  }
}
