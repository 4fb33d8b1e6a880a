// DryRunExecutor: the executor of a dry run (-n): it starts nothing and says what it would run.

/// Runs nothing (ninja's DryRunCommandRunner): each command is told to `note` as "sh: COMMAND"
/// and succeeds at once with no output, as a dry run assumes every command does.
public final class DryRunExecutor: CommandExecutor {
  let inbox: Inbox
  let note: (String) -> Void

  public init(inbox: Inbox, note: @escaping (String) -> Void) {
    self.inbox = inbox
    self.note = note
  }

  public func start(_ spec: CommandSpec, token: CommandToken) {
    note("sh: " + spec.display)
    inbox.post(.processExited(token: token, result: CommandResult(status: 0, stdout: "", stderr: "")))
  }

  /// It has ended already: nothing to stop.
  public func signal(token: CommandToken, _ signal: Int32) {}
  public func shown(_ text: String, stream: OutputChannel) -> String { text }
  public func finished(_ result: CommandResult) -> CommandResult { result }
  public func endAll() {}
}
