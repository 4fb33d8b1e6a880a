// RunsDiff: `taskrun runs diff [A [B]]`, what changed from run A to run B, operation by operation.
import TaskEngine

/// Run A against run B, from each operation's last attempt in each: outcome changes, notable
/// duration changes (`isNotable`), operations that ran in only one of them, and why those of B
/// ran (the `why` recorded with the attempt). An operation a run reused (up to date in a `-w`
/// cycle, or reused by `--resume`: recorded as attempt 0) did not run in it: it is counted in
/// that run's `Reused in run N` line and nowhere else.
struct RunsDiff {
  struct Change: Equatable {
    var name: String
    var before: String, after: String
  }
  var outcomeChanges: [Change] = []
  var durationChanges: [(name: String, before: Double, after: Double)] = []
  var onlyInA: [String] = [], onlyInB: [String] = []
  var whyInB: [(name: String, why: String)] = []
  /// The operations each run reused without running them (attempt 0).
  var reusedInA: [String] = [], reusedInB: [String] = []

  /// A duration change worth a line: both at least 10 ms, and changed by at least 20% of A's
  /// and at least 50 ms (the rule the documentation states).
  static func isNotable(_ a: Double, _ b: Double) -> Bool {
    a >= 0.01 && b >= 0.01 && abs(b - a) >= 0.2 * a && abs(b - a) >= 0.05
  }

  /// A duration read from the store, nil for one that is none (doctored).
  static func seconds(_ a: AttemptRecord) -> Double? {
    guard let d = a.duration, d.isFinite, d >= 0, d < 1e9 else { return nil }
    return d
  }

  init(a: [(String, AttemptRecord)], b: [(String, AttemptRecord)]) {
    // A reused attempt (attempt 0: up to date in a -w cycle, or reused by --resume) did not
    // run: it is no operation that ran, nor one that ran again; each run's are counted apart.
    reusedInA = a.filter { $0.1.attempt == 0 }.map(\.0)
    reusedInB = b.filter { $0.1.attempt == 0 }.map(\.0)
    var inA: [String: AttemptRecord] = [:]
    for (name, attempt) in a where attempt.attempt > 0 { inA[name] = attempt }
    var inB: Set<String> = []
    for (name, attempt) in b where attempt.attempt > 0 {
      inB.insert(name)
      if let why = attempt.why, !why.isEmpty { whyInB.append((name, why)) }
      guard let old = inA[name] else {
        onlyInB.append(name)
        continue
      }
      if old.outcome != attempt.outcome {
        outcomeChanges.append(Change(name: name, before: old.outcome, after: attempt.outcome))
      }
      if let before = Self.seconds(old), let after = Self.seconds(attempt), Self.isNotable(before, after) {
        durationChanges.append((name, before, after))
      }
    }
    onlyInA = a.filter { $0.1.attempt > 0 && !inB.contains($0.0) }.map(\.0)
  }

  var isEmpty: Bool {
    outcomeChanges.isEmpty && durationChanges.isEmpty && onlyInA.isEmpty && onlyInB.isEmpty
  }

  /// The runs `words` name (none: the last two; one: it and the last), compared and printed.
  static func compare(_ words: [String], store: RunStore) throws {
    let runs: (RunRecord, RunRecord)
    switch words.count {
    case 0:
      let last = store.runs(limit: 2)
      guard last.count == 2 else {
        TerminalText.writeMessage("taskrun: runs diff needs two runs, and \(last.count) is recorded")
        throw Taskrun.Exit(.failure)
      }
      runs = (last[1], last[0])
    case 1: runs = (try RunRecords.run(words[0], in: store), try RunRecords.run("last", in: store))
    default: runs = (try RunRecords.run(words[0], in: store), try RunRecords.run(words[1], in: store))
    }
    let (a, b) = (runs.0.id, runs.1.id)
    let diff = RunsDiff(a: RunRecords.lastAttempts(of: a, in: store), b: RunRecords.lastAttempts(of: b, in: store))
    for line in diff.lines(a: a, b: b) { print(line) }
  }

  /// The report, every name and reason escaped (they come from the store).
  func lines(a: Int64, b: Int64) -> [String] {
    let e = { (text: String) in TerminalText.escaped(text, keepingLines: false) }
    var out = ["Run \(a) → run \(b)"]
    if isEmpty { out.append("No operation changed its outcome or notably its duration.") }
    if !outcomeChanges.isEmpty {
      out.append("Outcome:")
      for c in outcomeChanges { out.append("  \(e(c.name)): \(e(c.before)) → \(e(c.after))") }
    }
    if !durationChanges.isEmpty {
      out.append("Duration (both ≥ 10 ms, changed by ≥ 20% and ≥ 50 ms):")
      for c in durationChanges {
        let percent = Int(((c.after - c.before) / c.before * 100).rounded())
        out.append(
          "  \(e(c.name)): \(formatSeconds(c.before)) → \(formatSeconds(c.after)) (\(percent >= 0 ? "+" : "")\(percent)%)"
        )
      }
    }
    let list = { (names: [String]) in
      names.prefix(20).map(e).joined(separator: ", ") + (names.count > 20 ? ", … (\(names.count) in all)" : "")
    }
    if !onlyInA.isEmpty { out.append("Ran only in run \(a): " + list(onlyInA)) }
    if !onlyInB.isEmpty { out.append("Ran only in run \(b): " + list(onlyInB)) }
    if !whyInB.isEmpty {
      out.append("Why they ran in run \(b):")
      for (name, why) in whyInB { out.append("  \(e(name)): \(e(why))") }
    }
    for (run, names) in (a == b ? [(b, reusedInB)] : [(a, reusedInA), (b, reusedInB)]) where !names.isEmpty {
      out.append(
        "Reused in run \(run) (up to date or resumed, not run): \(names.count) operation\(names.count == 1 ? "" : "s"): "
          + list(names))
    }
    return out
  }
}
