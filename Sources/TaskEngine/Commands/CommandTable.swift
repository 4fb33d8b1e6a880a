// CommandTable: every command of the run, local or remote, by its typed token, with its executor.
import Glibc

/// A command the table started (from `run`): the key of its reports in the inbox and of
/// `terminate`. A type of its own, so a command cannot be passed where a `TimerID` is expected.
public struct CommandToken: Hashable, Sendable, CustomStringConvertible {
  public let raw: Int
  public init(_ raw: Int) { self.raw = raw }
  public var description: String { String(raw) }
}

/// What a command's report in the inbox means for the scheduler, which acts on it (the table
/// calls no one but its executors).
enum CommandReport {
  /// Output text for the owner's record, as its executor shows it.
  case output(OperationNode, String, OutputChannel)
  /// Whole lines no one reads as they come: for the owner's kept tail only.
  case bytes(OperationNode, [UInt8])
  /// A stretch of a line the command overwrote (a progress meter).
  case overwrite(OperationNode, String)
  /// Where a command running elsewhere is now.
  case state(OperationNode, RemoteState)
  /// The command ended: its result as its operation sees it, for its completion.
  case exited(CommandResult, (CommandResult) -> Void)
}

/// The commands that have not been reported ended, each with the operation it runs for, the
/// executor that runs it (`processes`, this machine's, unless another is given), what to call
/// with its result and the SIGKILL timer of a stop. Scheduler's thread only.
public final class CommandTable {
  struct Entry {
    let owner: OperationNode?
    let executor: any CommandExecutor
    let completion: (CommandResult) -> Void
    /// SIGKILL after a stop's grace (cancelled when the command exits).
    var killTimer: TimerID?
  }

  let loop: EventLoop
  /// The local executor: commands run here, in process groups of their own.
  public let processes: ProcessRunner
  /// By `CommandToken.raw`: an Int key hashes on the standard library's fast path.
  @exclusivity(unchecked) private var entries: [Int: Entry] = [:]
  @exclusivity(unchecked) private var lastToken = 0
  /// Every executor other than `processes` that the run uses (ended by `endAll`).
  private var executors: [any CommandExecutor] = []

  init(loop: EventLoop, processes: ProcessRunner) {
    self.loop = loop
    self.processes = processes
  }

  /// No command is running.
  var isEmpty: Bool { entries.isEmpty }

  /// Starts `spec` on `executor` (nil: here) for `owner`, whose record gets its output;
  /// `completion` gets the result on the scheduler's thread.
  func run(
    _ spec: CommandSpec, for owner: OperationNode?, on executor: (any CommandExecutor)?,
    attaching job: (id: String, folder: String)? = nil, completion: @escaping (CommandResult) -> Void
  ) -> CommandToken {
    lastToken += 1
    let token = CommandToken(lastToken)
    let executor = executor ?? processes
    entries[token.raw] = Entry(owner: owner, executor: executor, completion: completion, killTimer: nil)
    if let job, executor.attach(job: job.id, folder: job.folder, token: token) { return token }
    executor.start(spec, token: token)
    return token
  }

  /// Asks a running command to stop: SIGTERM through its executor, SIGKILL once `grace`
  /// seconds passed on the loop without its exit. A second call while it stops does nothing.
  func terminate(_ token: CommandToken, grace: Double) {
    guard let entry = entries[token.raw], entry.killTimer == nil else { return }
    let executor = entry.executor
    executor.signal(token: token, SIGTERM)
    entries[token.raw]?.killTimer = loop.after(grace) { [weak self] in
      self?.entries[token.raw]?.killTimer = nil
      executor.signal(token: token, SIGKILL)
    }
  }

  /// Sends `signal` to every command `owner` runs (SIGSTOP and SIGCONT: a pause and its
  /// resume), through each one's executor.
  func signal(ownedBy owner: OperationNode, _ signal: Int32) {
    for (raw, entry) in entries where entry.owner === owner {
      entry.executor.signal(token: CommandToken(raw), signal)
    }
  }

  /// What the inbox's `item` means for its command, if it is a report of a command this table
  /// runs; an exit removes the command (and its SIGKILL timer). Inlined into the loop: an
  /// item is large (a command's whole result), and each copy of it was a `memcpy`.
  @inline(__always)
  func route(_ item: __owned InboxItem) -> CommandReport? {
    switch item {
    case .processOutput(let token, let stream, let text):
      guard let entry = entries[token.raw], let op = entry.owner else { return nil }
      if entry.executor === processes { return .output(op, text, stream) }
      let shown = entry.executor.shown(text, stream: stream)
      return shown.isEmpty ? nil : .output(op, shown, stream)
    case .processBytes(let token, _, let bytes):
      return entries[token.raw]?.owner.map { .bytes($0, bytes) }
    case .processOverwrite(let token, let text):
      return entries[token.raw]?.owner.map { .overwrite($0, text) }
    case .commandState(let token, let state):
      return entries[token.raw]?.owner.map { .state($0, state) }
    case .processExited(let token, let result):
      guard let entry = entries.removeValue(forKey: token.raw) else { return nil }
      loop.cancel(entry.killTimer)
      return .exited(entry.executor === processes ? result : entry.executor.finished(result), entry.completion)
    case .signal, .completion, .wake:
      return nil
    }
  }

  /// The operation of the command `token` if it runs here (the local runner); nil when it
  /// runs elsewhere (its executor may filter its text) or for no operation.
  func localOwner(of token: CommandToken) -> OperationNode? {
    guard let entry = entries[token.raw], entry.executor === processes else { return nil }
    return entry.owner
  }

  /// Has `executor` ended with the run (`endAll`).
  func use(_ executor: any CommandExecutor) {
    if executor !== processes, !executors.contains(where: { $0 === executor }) { executors.append(executor) }
  }

  /// Nothing any executor the run used started outlives it (called at every exit; the local
  /// runner's descendants are ended by its own `endDescendants`).
  func endAll() {
    for executor in executors { executor.endAll() }
  }
}
