// RunSettings: what the command line chose for a run's failure and stop policy.

/// The scheduler's settings, set before the run (and by the REPL between runs).
struct RunSettings {
  /// Without it, the first failure stops new operations from starting (running ones finish).
  var keepGoing = false
  /// Seconds a cancelled command gets between SIGTERM and SIGKILL.
  var killGrace = 2.0
  /// A second interrupt also kills the process's other children outside its own process group.
  var killsStrays = true
}
