// RunRecords: how `taskrun runs` and `taskrun report` open the run store read only and name a run (a number or `last`).
import Glibc
import TaskEngine

enum RunRecords {
  /// The store of the script `words` (and -f, -C) mean, read only, and the words after the
  /// script. `check` judges those words (and may throw a usage error) before the store is
  /// looked at, so that a wrong word is a usage error (exit 2) with a store or without one.
  /// No store yet: `none` is called (it says so and exits).
  static func open(
    _ place: ScriptPlace, words: [String],
    check: (_ words: [String], _ script: String, _ folder: String) throws -> Void,
    none: (String) throws -> Never
  ) throws -> (store: RunStore, words: [String], script: String) {
    let (script, rest) = try StoreCommands.resolve(file: place.file, directory: place.directory, words: words)
    guard access(script, F_OK) == 0 else {
      throw StoreCommands.usage("no script '\(TerminalText.escaped(script))' here")
    }
    guard let folder = RunStoreAccess.workflowFolder(of: script) else {
      throw StoreCommands.usage("a script read from standard input has no run store")
    }
    try check(rest, script, folder)
    do {
      let store = try RunStore(workflowFolder: folder, script: script, lock: false)
      return (store, rest, script)
    } catch {
      let text = "\(error)"
      // A store that is there and cannot be read is an error of its own, not "no runs".
      if !text.hasPrefix("no run store") {
        TerminalText.writeMessage("taskrun: " + TerminalText.escaped(text))
        throw Taskrun.Exit(.failure)
      }
      try none(folder)
    }
  }

  /// "No runs recorded" for a command that needs a run: on standard error, exit 1.
  static func noRuns(_ folder: String) throws -> Never {
    TerminalText.writeMessage("taskrun: no runs recorded in \(TerminalText.escaped(folder)) yet")
    throw Taskrun.Exit(.failure)
  }

  /// The run `word` names: a run id (a whole number from 1) or `last`. Not kept: an error
  /// (exit 1) that says where the kept runs are listed.
  static func run(_ word: String, in store: RunStore) throws -> RunRecord {
    var id = try runID(word)
    if id == nil {
      id = store.runs(limit: 1).first?.id
      guard id != nil else {
        TerminalText.writeMessage("taskrun: no runs are recorded yet")
        throw Taskrun.Exit(.failure)
      }
    }
    guard let id, let run = store.runs(limit: 1, id: id).first else {
      TerminalText.writeMessage("taskrun: run \(word) is not in the store (taskrun runs lists the kept runs)")
      throw Taskrun.Exit(.failure)
    }
    return run
  }

  /// The run id `word` names (nil: `last`); a word that names no run is a usage error (exit 2),
  /// whether or not there is a store.
  static func runID(_ word: String) throws -> Int64? {
    if word == "last" { return nil }
    guard let n = Int64(word), n >= 1 else {
      throw StoreCommands.usage(
        "'\(TerminalText.escaped(word))' is not a run: a run id (a whole number from 1, see taskrun runs) or last")
    }
    return n
  }

  /// What a run is now: its recorded outcome, else `running` (its script's store is held and
  /// it is the newest) or `killed`.
  static func outcome(_ run: RunRecord, newest: Bool, held: Bool) -> String {
    run.outcome ?? (held && newest ? "running" : "killed")
  }

  /// A run's counts as its summary printed them: the store's `up_to_date` column counts the
  /// operations `--resume` reused too (`resumed`), and the summary names them apart
  /// (`2 up to date, 3 resumed`), so `runs` and `runs --json` do.
  static func counts(_ run: RunRecord) -> [String: Int] {
    var c = run.counts
    if let upToDate = c["up_to_date"], let resumed = c["resumed"] {
      c["up_to_date"] = upToDate - min(upToDate, resumed)
    }
    return c
  }

  /// What `runs show` and `report` say of a run that ended in an error (outcome `error`: a
  /// script that did not load, or a usage error), whose message the store does not keep; nil
  /// for any other run.
  static func errorNote(_ run: RunRecord) -> String? {
    guard run.outcome == "error" else { return nil }
    let keys = ["succeeded", "failed", "cancelled", "skipped", "up_to_date", "resumed"]
    if keys.allSatisfy({ (run.counts[$0] ?? 0) == 0 }) {
      return "The run ended in an error before any operation finished: the script did not load, or its "
        + "command line was wrong (a target it does not have). The store keeps no message: run it again to see it."
    }
    return "The run ended in an error (a script or usage error). The store keeps no message: run it again to see it."
  }

  /// A run's duration in seconds, nil when it has none that is one (never ended, doctored).
  static func duration(_ run: RunRecord) -> Double? {
    guard let ended = run.ended else { return nil }
    let d = ended - run.started
    return d.isFinite && d >= 0 && d < 1e9 ? d : nil
  }

  /// Each operation's last attempt of a run, in the order they ended (the outcome it ended with).
  static func lastAttempts(of run: Int64, in store: RunStore) -> [(String, AttemptRecord)] {
    var order: [String] = []
    var last: [String: AttemptRecord] = [:]
    for (_, a) in store.attempts(run: run) {
      if last[a.operation] == nil { order.append(a.operation) }
      last[a.operation] = a
    }
    return order.map { ($0, last[$0]!) }
  }
}
