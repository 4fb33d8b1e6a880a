// RootFailures: --output errors: only the operations that failed by themselves, and a line per failure for what it stopped.
import TaskEngine

/// Stands in front of a quiet line reporter (`lines`: failures, retries and the summary):
/// an operation that failed by itself is shown as ever (its FAILED line and the end of its
/// output); a group that failed because of a child is not (its child's failure is), and what
/// was skipped or cancelled because of a failure is counted under that failure, told in one
/// line per failure before the summary: a cascade of a million operations is one line.
final class RootFailures: EventSink {
  private let lines: PlainReporter
  /// Each operation that did not succeed because of another: the failure behind it.
  private var roots: [String: String] = [:]
  /// What each failure stopped, in the order the failures were first named.
  private var stopped: [String: (skipped: Int, cancelled: Int)] = [:]
  private var failures: [String] = []
  /// How each operation that did not succeed by itself ended (a failure, else a cancel).
  private var ends: [String: Outcome] = [:]

  init(lines: PlainReporter) { self.lines = lines }

  /// The reporter's, and the cause of every finish that is not a success.
  var interests: EventInterests { lines.interests.union(.causes) }

  func receive(_ event: RunEvent) {
    switch event {
    case .operationFinish(_, let name, let outcome, _, let details) where outcome != .succeeded:
      guard let cause = details?.cause else {  // by itself: shown
        ends[name] = outcome
        return lines.receive(event)
      }
      let root = roots[cause] ?? cause
      roots[name] = root
      if outcome == .failed { return }  // a group, failed because of `root`
      if stopped[root] == nil { failures.append(root) }
      if outcome == .skipped { stopped[root, default: (0, 0)].skipped += 1 }
      if outcome == .cancelled { stopped[root, default: (0, 0)].cancelled += 1 }
    case .runFinish:
      for root in failures { lines.failure(Self.line(root, ends[root] ?? .failed, stopped[root]!)) }
      (roots, stopped, failures, ends) = ([:], [:], [], [:])
      lines.receive(event)
    default:
      lines.receive(event)
    }
  }

  /// "12 operations cancelled because 'compile' failed" (skipped, or both, as it was).
  static func line(_ root: String, _ end: Outcome, _ count: (skipped: Int, cancelled: Int)) -> String {
    let total = count.skipped + count.cancelled
    let what =
      count.cancelled == 0 ? "skipped" : count.skipped == 0 ? "cancelled" : "skipped or cancelled"
    let both =
      count.skipped > 0 && count.cancelled > 0 ? " (\(count.skipped) skipped, \(count.cancelled) cancelled)" : ""
    return
      "\(total) operation\(total == 1 ? "" : "s") \(what) because '\(PlainReporter.name(root))' \(end == .failed ? "failed" : "was \(end.rawValue)")\(both)"
  }
}
