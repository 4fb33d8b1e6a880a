// FakeExecutor: a scripted command executor on the scheduler's (manual) clock, for tests of the command path.
import Glibc

@testable import TaskEngine

/// Runs no process: each command follows its `Script` in the scheduler's time, posting what a
/// real executor posts to the inbox (states, output, exactly one exit). It logs what it was
/// asked, with the time, so a test sees when TERM and KILL came.
final class FakeExecutor: CommandExecutor {
  /// How one command behaves.
  struct Script {
    /// Seconds it runs once running (then it exits with `status`).
    var seconds = 1.0
    var status: Int32 = 0
    /// Lines it writes on stdout when it exits.
    var output: [String] = []
    /// Seconds it is queued (a cluster's `remoteState`) before it runs; nil: it runs at once,
    /// and reports no state.
    var queuedFor: Double?
    /// Seconds after SIGTERM until it exits (status 143); nil: it ignores SIGTERM.
    var exitsAfterTerm: Double? = 0.5
  }

  let scheduler: Scheduler
  /// The script of each command, from its argv and how many commands with that argv started.
  var script: (_ argv: [String], _ attempt: Int) -> Script
  /// "start echo x @0", "TERM echo x @3", "KILL echo x @5", "exit echo x 0 @5".
  private(set) var log: [String] = []
  private var running: [CommandToken: (argv: [String], exit: TimerID?)] = [:]
  private var starts: [[String]: Int] = [:]
  /// Seconds after SIGTERM until each running command exits (nil: it ignores SIGTERM).
  private var terms: [CommandToken: Double?] = [:]

  init(_ scheduler: Scheduler, script: @escaping (_ argv: [String], _ attempt: Int) -> Script = { _, _ in Script() }) {
    self.scheduler = scheduler
    self.script = script
  }

  /// The log's lines that begin with `word` ("TERM", "KILL", "start", "exit").
  func lines(_ word: String) -> [String] { log.filter { $0.hasPrefix(word + " ") } }

  private func note(_ text: String, _ argv: [String]) {
    log.append("\(text) \(argv.joined(separator: " ")) @\(Int(scheduler.elapsed.rounded()))")
  }

  func start(_ spec: CommandSpec, token: CommandToken) {
    let argv = spec.argv
    starts[argv, default: 0] += 1
    let plan = script(argv, starts[argv]!)
    note("start", argv)
    running[token] = (argv, nil)
    terms[token] = plan.exitsAfterTerm
    let run = { [self] in
      guard running[token] != nil else { return }
      if plan.queuedFor != nil { post(.commandState(token: token, state: state(token, queued: false))) }
      running[token]?.exit = scheduler.after(plan.seconds) { [self] in
        for line in plan.output { post(.processOutput(token: token, stream: .stdout, text: line + "\n")) }
        exit(token, status: plan.status, stdout: plan.output.map { $0 + "\n" }.joined())
      }
    }
    if let queued = plan.queuedFor {
      post(.commandState(token: token, state: state(token, queued: true)))
      running[token]?.exit = scheduler.after(queued, run)
    } else {
      run()
    }
  }

  private func state(_ token: CommandToken, queued: Bool) -> RemoteState {
    RemoteState(
      executor: "fake", job: "\(token)", queued: queued, reason: queued ? "Resources" : nil,
      node: queued ? nil : "node1")
  }

  func signal(token: CommandToken, _ signal: Int32) {
    guard let command = running[token] else { return }
    note(signal == SIGKILL ? "KILL" : signal == SIGTERM ? "TERM" : "signal \(signal)", command.argv)
    if signal == SIGKILL {
      scheduler.cancelTimer(command.exit)
      exit(token, status: 128 + SIGKILL, stdout: "")
    } else if signal == SIGTERM, let after = terms[token] ?? nil {
      scheduler.cancelTimer(command.exit)
      running[token]?.exit = scheduler.after(after) { [self] in exit(token, status: 128 + SIGTERM, stdout: "") }
    }
  }

  private func exit(_ token: CommandToken, status: Int32, stdout: String) {
    guard let command = running.removeValue(forKey: token) else { return }
    note("exit \(status)", command.argv)
    post(.processExited(token: token, result: CommandResult(status: status, stdout: stdout, stderr: "")))
  }

  private func post(_ item: InboxItem) { scheduler.inbox.post(item) }

  /// Its own lines ("fake: …") are not the command's output.
  func shown(_ text: String, stream: OutputChannel) -> String { text.hasPrefix("fake: ") ? "" : text }
  /// A command it ended with status 99 failed for the cluster's reason.
  func finished(_ result: CommandResult) -> CommandResult {
    var result = result
    if result.status == 99 { result.reason = "lost by the fake cluster" }
    return result
  }
  func endAll() {}
}
