// SrunAccount: how a job step ended, in srun's own words (srun runs with -v): which step, on
// which node, and whether Slurm ended it. slurmstepd's `*** STEP … CANCELLED ***` line is not
// enough: srun stops reading the step's output once it learns a task was killed, so under
// load that line is often lost, while srun's own lines are written by srun itself.

/// What srun said about its step (its stderr, before taskrun drops srun's lines).
struct SrunAccount: Equatable {
  /// The step's id ("4.0") and node, from srun's "launching StepId=4.0 on host vm, …".
  var step: String?
  var node: String?
  /// Slurm told srun the step is over (`Complete StepId=… received`), or srun gave up on it
  /// (`Job step aborted`, `… aborted before step completely launched`).
  var endedBySlurm = false
  /// The step's task was killed by a signal (`task 0: Killed`, `status=0x0009`). The task is
  /// taskrun's wrapper, which stops its command on TERM and never kills itself: only Slurm
  /// (or someone on the node) kills it.
  var taskKilled = false

  init(_ stderr: String) {
    for line in stderr.split(separator: "\n") where line.hasPrefix("srun: ") {
      if let launch = line.firstMatch(of: /launching StepId=(\d+\.\d+) on host ([^,\s]+)/) {
        (step, node) = (String(launch.1), String(launch.2))
      } else if line.contains("Job step aborted") || line.contains("aborted before step completely launched")
        || line.firstMatch(of: /Complete StepId=\S+ received/) != nil
      {
        endedBySlurm = true
      } else if line.firstMatch(of: /: tasks? [0-9,\-\[\]]+: Killed$/) != nil || line.contains("(status=0x0009)")
        || line.contains("Force Terminated")
      {
        taskKilled = true
      }
    }
  }

  /// Why the step failed when slurmstepd's own line did not arrive; `jobState` asks for the
  /// state of the allocation (the job) now (nil when squeue does not answer). Nil when srun does not say
  /// that Slurm ended the step.
  func reason(jobState: (_ job: String) -> String?) -> String? {
    guard endedBySlurm || taskKilled, let step, let node else { return nil }
    let job = String(step.prefix { $0 != "." })
    // The whole allocation ended (its time limit, scancel of the job): the job's state says why.
    if let jobState = jobState(job), !["RUNNING", "SUSPENDED", "CONFIGURING"].contains(jobState) {
      return Slurm.reason(state: jobState, id: job, stopping: false)
    }
    return "cancelled in Slurm (step \(step) on \(node))"
  }
}
