// ExecutorChoice: `--executor` and the job name of this run's Slurm jobs.
import TaskEngine

/// Which executor queues get when they do not name one, and the Slurm job name of the run.
struct ExecutorChoice {
  /// "slurm" or "local" (nil: each queue says, else this machine).
  var choice: String?
  /// Made when the first Slurm executor is.
  lazy var slurmTag = Slurm.runTag()
}
