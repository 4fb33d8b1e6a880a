// PlainReporter: line-per-event output for pipes, CI and terminals until the live view lands.
import CTerminal
import FoundationEssentials
import Glibc
import TaskEngine

/// Whether to colour output: NO_COLOR and --no-color switch it off; FORCE_COLOR and
/// CLICOLOR_FORCE switch it on; otherwise only on a terminal.
struct ColorPolicy {
  var enabled: Bool

  static func decide(
    disabled: Bool, isTerminal: Bool,
    environment: (String) -> String? = Environment.variable
  ) -> ColorPolicy {
    if disabled || environment("NO_COLOR").map({ !$0.isEmpty }) == true { return ColorPolicy(enabled: false) }
    for key in ["FORCE_COLOR", "CLICOLOR_FORCE"] {
      if let value = environment(key), !value.isEmpty, value != "0" { return ColorPolicy(enabled: true) }
    }
    return ColorPolicy(enabled: isTerminal)
  }

  func paint(_ text: String, _ code: String) -> String {
    enabled ? "\u{1B}[\(code)m\(text)\u{1B}[0m" : text
  }
}

/// Prints one line when an operation starts and when it finishes, failures with their output
/// and traceback, and a summary. Failures (and the summary's list of them) go to standard
/// error, as make and ninja print theirs, so `taskrun x.lua > log` still shows them. A
/// consumer of run events only.
final class PlainReporter: EventSink {
  /// `quiet`: failures, retries and the summary only (-q, and --progress none).
  enum Verbosity { case quiet, normal, verbose }
  let verbosity: Verbosity
  let color: ColorPolicy
  /// A line per start (off under the live view, which shows what runs).
  let showStarts: Bool

  /// On a CI service (`CIFolding.service`): names break `::` up (`CIFolding.title`), so no
  /// line can start a workflow command with an operation's name (GitHub trims the spaces
  /// before one). Read from the environment once.
  static let escapesNames = CIFolding.service() != nil

  /// A `confirm` question is on the terminal: what would be printed waits for the answer.
  private var prompting = false
  private var held: [RunEvent] = []

  /// "ok" as each finished line starts, painted once, in memory of its own: every
  /// operation's line reads it, and a `String` property is retained and released at each read.
  private let okLabel: UnsafeMutableBufferPointer<CChar>

  /// Quiet, it prints no start and no success.
  var interests: EventInterests {
    let shown: EventInterests = verbosity == .quiet ? [] : showStarts ? [.starts, .successes] : .successes
    return verbosity == .verbose ? shown.union(.output) : shown  // -v prints every line
  }

  init(verbosity: Verbosity, color: ColorPolicy, showStarts: Bool = true) {
    self.verbosity = verbosity
    self.color = color
    self.showStarts = showStarts
    let ok = Array(Self.label("ok", "32", color).utf8CString.dropLast())
    okLabel = .allocate(capacity: ok.count)
    _ = okLabel.initialize(from: ok)
  }

  deinit { okLabel.deallocate() }

  func receive(_ event: RunEvent) {
    // The event every operation makes, a success that left nothing to show, matched first.
    if !prompting, case .operationFinish(_, let name, .succeeded, let duration, nil) = event {
      return succeeded(name, duration)
    }
    switch event {
    case .prompt(_, let text):
      prompting = text != nil
      // What was printed reaches the terminal (or the pipe) before the question, or before
      // an interactive command writes to the same place itself.
      if prompting { fflush(nil) } else { release() }
      return
    case .runProgress(_, let progress) where progress.stopping && prompting:
      print("")  // Ctrl-C at the question: its line ends, and what waited is printed
      prompting = false
      release()
      return
    case .message, .output, .operationStart, .operationFinish, .successes, .operationRetry, .runFinish,
      .operationChange:
      if prompting { held.append(event); return }
    default:
      break
    }
    show(event)
  }

  private func release() {
    let waiting = held
    held = []
    for event in waiting { show(event) }
  }

  private func show(_ event: RunEvent) {
    switch event {
    case .runStart, .runProgress, .operationProgress, .activity, .prompt, .tick, .remoteState, .queueChange:
      break
    case .operationChange(_, let name, let change):
      guard verbosity != .quiet else { return }
      if change == .paused { line(label("pause", "33"), Self.name(name)) }
      if change == .resumed { line(label("resume", "33"), Self.name(name)) }
    case .message(_, _, let text, let note):
      if note { failure(text) } else { print(text) }
    case .operationRetry(_, let name, let attempt, let error, let delay):
      line(
        label("retry", "33"),
        "\(Self.name(name)): attempt \(attempt) failed: \(Self.error(error)); "
          + (delay > 0 ? "trying again in \(formatSeconds(delay))" : "trying again"))
    case .operationStart(_, let name, let attempt, _, _, _, _, _):
      guard showStarts, verbosity == .normal || verbosity == .verbose else { return }
      line(label("start", "2"), Self.name(name) + (attempt > 1 ? " (attempt \(attempt))" : ""))
    case .output(_, let name, _, let text):
      guard verbosity == .verbose else { return }
      for part in text.split(separator: "\n", omittingEmptySubsequences: false).dropLast() {
        if TerminalText.isCleanLine(part) {
          print("[\(name)] \(part)")
        } else {
          print("[\(name)] \(TerminalText.outputLine(part))")
        }
      }
    case .successes(_, let operations):  // a live view's, at its frame: one write
      guard verbosity == .normal || verbosity == .verbose else { return }
      for op in operations { addSuccess(op.name, op.duration) }
      ct_write_finished_lines()
    case .operationFinish(_, let name, .succeeded, _, let details?) where details.reuse != nil:
      guard verbosity == .normal || verbosity == .verbose else { return }
      switch details.reuse! {
      case .upToDate: line(label("fresh", "2"), "\(name) — \(Self.oneLine(details.why ?? "up to date"))")
      case .resumed: line(label("resumed", "2"), "\(name) — \(Self.oneLine(details.why ?? "reused"))")
      }
    case .operationFinish(_, let name, .succeeded, let duration, let details?) where details.why != nil:
      guard verbosity == .normal || verbosity == .verbose else { return }
      line(label("ok", "32"), "\(name) (\(formatFixed(duration, 2)) s) — \(Self.oneLine(details.why!))")
    case .operationFinish(_, let name, let outcome, let duration, let details):
      finished(
        name, outcome, duration, details?.error, details?.output ?? "", earlier: details?.earlierOutputLines ?? 0)
      if outcome == .failed, let traceback = details?.traceback, !traceback.isEmpty {
        for line in traceback.split(separator: "\n") { failure("    \(Self.text(line.trimmed(newlines: false)))") }
      }
    case .runFinish(_, let summary):
      printSummary(summary)
    }
  }

  private func finished(
    _ name: String, _ outcome: Outcome, _ duration: Double, _ error: String?, _ output: String,
    earlier: Int = 0
  ) {
    var time: String { formatFixed(duration, 2) + " s" }  // only for lines that are printed
    switch outcome {
    case .succeeded:
      succeeded(name, duration)
    case .failed:
      failure(label("FAILED", "1;31") + " \(Self.name(name)) (\(time)): \(Self.error(error ?? "failed"))")
      if verbosity != .verbose { printOutput(output, earlier: earlier, limit: 200) }
    case .skipped:
      guard verbosity == .normal || verbosity == .verbose else { return }
      line(label("skipped", "33"), "\(Self.name(name)): \(Self.error(error ?? ""))")
    case .cancelled:
      guard verbosity == .normal || verbosity == .verbose else { return }
      line(label("cancelled", "33"), "\(Self.name(name)): \(Self.error(error ?? "cancelled"))")
    }
  }

  private func succeeded(_ name: String, _ duration: Double) {
    guard verbosity == .normal || verbosity == .verbose else { return }
    addSuccess(name, duration)
    ct_write_finished_lines()
  }

  private func addSuccess(_ name: String, _ duration: Double) {
    var name = name
    name.withUTF8 { ct_add_finished_line(okLabel.baseAddress, okLabel.count, $0.baseAddress, $0.count, duration) }
  }

  /// A line of output as a report shows it: 400 characters at most, its colours kept and
  /// any other control character escaped (`TerminalText.outputLine`).
  static func shown(_ line: Substring) -> String {
    TerminalText.outputLine(line.count > 400 ? line.prefix(400) + "…" : String(line))
  }

  /// A reason that names files (why an operation ran): one line, a newline in a name escaped.
  static func oneLine<S: StringProtocol>(_ text: S) -> String { TerminalText.escaped(String(text)) }

  /// Taskrun's words with text from outside in them (an error, which may quote a command's
  /// stderr, Slurm's reason or the command line): control characters escaped, lines kept.
  static func text<S: StringProtocol>(_ text: S) -> String { TerminalText.escaped(String(text), keepingLines: true) }

  /// An error (or a reason) after taskrun's words on a line: as `text`, and each line after
  /// its first indented as a failure's output is (`    | `), so no line of it starts where a
  /// CI log reads commands or headings (`::error::`, `--- `).
  static func error<S: StringProtocol>(_ error: S) -> String {
    let escaped = text(error)
    guard escaped.contains("\n") else { return escaped }
    return escaped.replacing("\n", with: "\n    | ")
  }

  /// An operation's name as a line shows it: on CI, with `::` broken up (`escapesNames`).
  static func name(_ name: String) -> String { escapesNames ? CIFolding.title(name) : name }

  /// The last `limit` lines of a failure's output, after a line that says how many came
  /// before them (`earlier`: those taskrun did not keep), on standard error with them.
  private func printOutput(_ output: String, earlier: Int, limit: Int) {
    var lines = output.split(separator: "\n", omittingEmptySubsequences: false)
    if lines.last == "" { lines.removeLast() }
    let hidden = earlier + max(0, lines.count - limit)
    if hidden > 0 {
      failure("    | … \(hidden) earlier line\(hidden == 1 ? "" : "s") (--events or -v shows them all)")
      lines = Array(lines.suffix(limit))
    }
    for output in lines { failure("    | " + Self.shown(output)) }
  }

  /// A line about a failure, on standard error (after what standard output holds).
  func failure(_ text: String) {
    fflush(nil)
    writeStandardError(text + "\n")
  }

  /// The run's summary: failures (on standard error, unless `toStandardOutput`: `taskrun runs
  /// show`), Slowest, the critical path (`omitted`: steps the store did not keep) and counts.
  func printSummary(
    _ summary: RunSummary, omitted: (steps: Int, seconds: Double) = (0, 0), toStandardOutput: Bool = false
  ) {
    let say = { (text: String) in toStandardOutput ? print(text) : self.failure(text) }
    let failed = summary.failures.filter { $0.outcome == .failed }
    if !failed.isEmpty {
      say(color.paint("Failures:", "1;31"))
      // The operations that failed by themselves; the groups around them, one line per
      // cause (100,000 nested groups are one line, not 100,000 repeating the same error).
      var groups: [String: [String]] = [:], causes: [String] = []
      for failure in failed {
        if let cause = failure.cause {
          if groups[cause] == nil { causes.append(cause) }
          groups[cause, default: []].append(failure.name)
          continue
        }
        say("  \(Self.name(failure.name)): \(Self.error(failure.error))")
        let tail = failure.output.split(separator: "\n").suffix(5)
        for output in tail { say("    | " + Self.shown(output)) }
      }
      for cause in causes {
        let names = groups[cause]!
        say(
          "  \(names.count) group\(names.count == 1 ? "" : "s") failed because of '\(Self.name(cause))': "
            + names.prefix(3).map(Self.name).joined(separator: ", ") + (names.count > 3 ? ", …" : ""))
      }
    }
    let notStarted = summary.failures.filter { $0.outcome == .cancelled }
    if !notStarted.isEmpty {
      let names =
        notStarted.prefix(8).map { Self.name($0.name) }.joined(separator: ", ")
        + (notStarted.count > 8 ? ", …" : "")
      say("Cancelled: \(names)")
    }
    if verbosity == .normal || verbosity == .verbose, summary.slowest.count > 1 {
      let seconds = { (t: RunSummary.Timing) in formatFixed(t.duration, 2) + " s" }
      print("Slowest: " + summary.slowest.prefix(3).map { "\($0.name) \(seconds($0))" }.joined(separator: ", "))
      if !summary.criticalPath.isEmpty {
        print("Critical path: " + Self.criticalPath(summary.criticalPath, omitted: omitted))
      }
    }
    var text = summary.counts + " in " + formatFixed(summary.elapsed, 2) + " s"
    if summary.interrupted { text += " (interrupted)" } else if let ended = summary.ended { text += " (\(ended))" }
    print(summary.allSucceeded ? color.paint(text, "1;32") : color.paint(text, "1"))
  }

  /// "a (0.10 s) → b (0.20 s) →[slot of 'main'] c (0.05 s)": each step says why the next
  /// one started then, when it was not simply its dependency finishing.
  static func criticalPath(_ path: [RunSummary.Timing], omitted: (steps: Int, seconds: Double) = (0, 0)) -> String {
    // A chain of a million operations is no line to read: its first and last ten steps, and
    // what lies between them in one (the events keep the whole path; the run store, its first
    // and last 1,000 steps: `omitted` are those between).
    let shown = 10
    var text = ""
    for (i, step) in path.enumerated() {
      if path.count + omitted.steps > 2 * shown + 1 && i >= shown && i < path.count - shown {
        if i == shown {
          let left = path[shown..<(path.count - shown)]
          let seconds = left.reduce(0) { $0 + $1.duration } + omitted.seconds
          text += " → … \(left.count + omitted.steps) more steps (\(formatFixed(seconds, 2)) s) …"
        }
        continue
      }
      if i > 0 {
        switch step.reason?.kind {
        case "queue"?: text += " →[slot of '\(step.reason?.detail ?? "")'] "
        case "resource"?: text += " →[\(step.reason?.detail ?? "resource")] "
        case "condition"?: text += " →[condition '\(step.reason?.detail ?? "")'] "
        case "producer"?: text += " →[produced] "
        case "group"?: text += " →[group] "
        default: text += " → "
        }
      }
      text += "\(step.name) (\(formatFixed(step.duration, 2)) s)"
    }
    return text
  }

  /// The plan of a dry run; with the run store's `prediction`, what would run and why.
  func plan(_ ops: [OperationNode], prediction: Prediction? = nil) {
    print("Plan (\(ops.count) operation\(ops.count == 1 ? "" : "s"), in execution order):")
    var verdicts: [ObjectIdentifier: (runs: Bool, why: String)] = [:]
    for verdict in prediction?.verdicts ?? [] {
      verdicts[ObjectIdentifier(verdict.operation)] = (verdict.runs, verdict.why)
    }
    for (i, op) in ops.enumerated() {
      var text = "\(i + 1). \(op.name)"
      if let body = op.body { text += " — \(Self.text(body.summary))" }
      var notes: [String] = []
      if !op.dependencies.isEmpty { notes.append("after " + op.dependencies.map(\.name).joined(separator: ", ")) }
      if op.queue.name != "main" { notes.append("queue \(op.queue.name)") }
      if op.priority != .normal { notes.append("priority \(op.priority.name)") }
      if op.policy != .succeeded { notes.append("when \(op.policy.rawValue)") }
      if !notes.isEmpty { text += " [" + notes.joined(separator: "; ") + "]" }
      if let verdict = verdicts[ObjectIdentifier(op)] {
        text += verdict.runs ? " — would run: \(Self.text(verdict.why))" : " — \(Self.text(verdict.why))"
      }
      print(text)
    }
    guard let prediction else { return }
    let running = prediction.verdicts.filter(\.runs).count
    print("Would run \(running), up to date \(prediction.verdicts.count - running)")
    if let seconds = prediction.seconds {
      print("Predicted: \(formatSeconds(seconds)) at -j\(prediction.slots ?? 1)")
      if !prediction.criticalPath.isEmpty {
        print(
          "Critical path: "
            + prediction.criticalPath.map { "\($0.name) (\(formatSeconds($0.seconds)))" }.joined(separator: " → "))
      }
    } else if prediction.slots != nil {
      print("Predicted: no history yet (a run records how long each operation takes)")
    }
  }

  func error(_ message: String) {
    fflush(nil)
    TerminalText.writeMessage("taskrun: " + message)
  }

  func note(_ message: String) { print("taskrun: " + Self.text(message)) }

  private func label(_ text: String, _ code: String) -> String { Self.label(text, code, color) }

  private static func label(_ text: String, _ code: String, _ color: ColorPolicy) -> String {
    color.paint(text + String(repeating: " ", count: max(0, 9 - text.count)), code)
  }

  private func line(_ label: String, _ text: String) { write(label, " ", text, "\n") }

  /// Writes `parts` to standard output's buffer one after another: a line per finished
  /// operation costs less than `print` or building the line as one string.
  private func write(_ parts: String...) {
    for var part in parts { part.withUTF8 { ct_write_stdout($0.baseAddress, $0.count) } }
  }
}
