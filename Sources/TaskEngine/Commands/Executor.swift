// Executor: where an operation's `sh` command runs. This machine (ProcessRunner) unless its
// queue names another (a Slurm cluster, Slurm/), or nowhere in a dry run (DryRunExecutor);
// every executor reports to the same inbox.

/// Runs commands for the scheduler's `CommandTable`. Reports arrive in the scheduler's inbox,
/// tagged with the token: `.processOutput` (whole lines) and exactly one `.processExited` per
/// command.
public protocol CommandExecutor: AnyObject {
  /// Starts `spec` for `token`.
  func start(_ spec: CommandSpec, token: CommandToken)
  /// SIGTERM asks the command to stop (its group gets TERM, then KILL after the grace);
  /// SIGKILL ends it.
  func signal(token: CommandToken, _ signal: Int32)
  /// The command's output as the reports show it (an executor may drop its own lines).
  func shown(_ text: String, stream: OutputChannel) -> String
  /// The command's result as its operation sees it.
  func finished(_ result: CommandResult) -> CommandResult
  /// Nothing it started outlives the run (called at every exit).
  func endAll()
  /// Follows, for `token`, a job an earlier (killed) taskrun started: `job` in `folder`
  /// (`--resume`). False where the executor cannot (then the command is started anew).
  func attach(job: String, folder: String, token: CommandToken) -> Bool
}

extension CommandExecutor {
  public func attach(job: String, folder: String, token: CommandToken) -> Bool { false }
}

extension ProcessRunner: CommandExecutor {
  public func shown(_ text: String, stream: OutputChannel) -> String { text }
  public func finished(_ result: CommandResult) -> CommandResult { result }
  public func endAll() { endDescendants() }
}
