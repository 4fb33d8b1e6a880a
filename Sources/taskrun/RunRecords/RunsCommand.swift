// RunsCommand: `taskrun runs` (the kept runs), `taskrun runs show ID` (a run's summary again) and `taskrun runs diff [A [B]]`.
import ArgumentParser
import TaskEngine

/// `taskrun runs [show ID | diff [A [B]]]`, read from the run store of the script's folder.
struct RunsCommand: ParsableCommand, InvokedCommand {
  static let configuration = CommandConfiguration(
    commandName: "runs",
    abstract: "List the runs kept in the run store, show one's summary again, or compare two.",
    usage: """
      taskrun runs [-C DIR] [-f FILE | SCRIPT] [--json] [--limit N]
      taskrun runs [-C DIR] [-f FILE | SCRIPT] show ID
      taskrun runs [-C DIR] [-f FILE | SCRIPT] diff [A [B]]
      """,
    discussion: """
      Runs are listed newest first, as git log and taskrun history list them. ID is a run's id \
      or last. diff compares run A with run B: without them, the last two runs; with A only, A \
      with the last run. Without SCRIPT (or -f), taskrun.lua or workflow.lua here or in a parent \
      folder, as for a run.
      """)

  @OptionGroup var place: ScriptPlace

  @Flag(help: "One JSON object a line, for scripts (the list only).")
  var json = false

  @Option(help: "How many runs to list (1 to 10000).")
  var limit: Int = 20

  @Argument(help: ArgumentHelp("The workflow script, then show ID or diff [A [B]].", valueName: "script-and-words"))
  var words: [String] = []

  func run(_ invocation: Invocation, choice: CommandChoice) throws {
    guard (1...10_000).contains(limit) else {
      throw StoreCommands.usage("--limit must be from 1 to 10000 (got \(limit))")
    }
    let listing = try RunRecords.open(place, words: words, check: { rest, _, _ in try Self.check(rest) }) { folder in
      if words.last(where: { $0 == "show" || $0 == "diff" }) != nil { try RunRecords.noRuns(folder) }
      if !json { print("No runs recorded in \(TerminalText.escaped(folder)) yet.") }
      throw Taskrun.Exit(.success)
    }
    let (store, rest, _) = listing
    switch rest.first {
    case "show"?: try RunsShow.show(try RunRecords.run(rest[1], in: store), store: store)
    case "diff"?: try RunsDiff.compare(rest.dropFirst().map { $0 }, store: store)
    default: list(store)
    }
    throw Taskrun.Exit(.success)
  }

  /// The words after the script, judged before the store is looked at: a wrong one is a usage
  /// error (exit 2) whether or not a run was recorded.
  static func check(_ rest: [String]) throws {
    switch rest.first {
    case nil: return
    case "show"?:
      guard rest.count == 2 else { throw StoreCommands.usage("taskrun runs show takes one run: an id or last") }
    case "diff"?:
      guard rest.count <= 3 else { throw StoreCommands.usage("taskrun runs diff takes at most two runs") }
    case let word?:
      throw StoreCommands.usage(
        "taskrun runs: '\(TerminalText.escaped(word))' is not show or diff (taskrun runs --help)")
    }
    for word in rest.dropFirst() { _ = try RunRecords.runID(word) }
  }

  private func list(_ store: RunStore) {
    let runs = store.runs(limit: limit)
    let held = store.isHeld
    if runs.isEmpty && !json {
      print("No runs recorded yet.")
      return
    }
    if !json {
      print(
        "run     started              duration   outcome      ran  failed  cancelled  skipped  up to date  resumed  targets"
      )
    }
    for (k, run) in runs.enumerated() {
      let outcome = RunRecords.outcome(run, newest: k == 0, held: held)
      let c = RunRecords.counts(run)
      if json {
        var fields: [(String, JSON)] = [
          ("id", .int(Int(run.id))), ("started", run.started.isFinite ? .number(run.started) : .null),
          ("ended", run.ended.map { $0.isFinite ? .number($0) : .null } ?? .null),
          ("duration", RunRecords.duration(run).map { .number($0) } ?? .null), ("outcome", .string(outcome))
        ]
        for key in ["succeeded", "failed", "cancelled", "skipped", "up_to_date", "resumed"] {
          fields.append((key, c[key].map { .int($0) } ?? .null))
        }
        fields.append(("targets", run.targets.map { .array($0.map { .string($0) }) } ?? .null))
        fields.append(("command", .string(run.command)))
        print(JSON.object(fields).text)
        continue
      }
      let count = { (key: String) in c[key].map { "\($0)" } ?? "-" }
      print(
        StoreCommands.pad("\(run.id)", 8) + StoreCommands.pad(StoreCommands.date(run.started), 21)
          + StoreCommands.pad(StoreCommands.seconds(RunRecords.duration(run)), 11)
          + StoreCommands.pad(outcome, 13) + StoreCommands.pad(count("succeeded"), 5)
          + StoreCommands.pad(count("failed"), 8) + StoreCommands.pad(count("cancelled"), 11)
          + StoreCommands.pad(count("skipped"), 9) + StoreCommands.pad(count("up_to_date"), 12)
          + StoreCommands.pad(count("resumed"), 9)
          + TerminalText.escaped(Self.targets(run), keepingLines: false))
    }
  }

  /// A run's targets as its command line named them ("(default)": none; "-": not recorded).
  static func targets(_ run: RunRecord) -> String {
    guard let targets = run.targets else { return "-" }
    return targets.isEmpty ? "(default)" : targets.joined(separator: " ")
  }
}

/// `taskrun runs show ID`: the run's summary as its end printed it, from what the store kept.
enum RunsShow {
  static func show(_ run: RunRecord, store: RunStore) throws {
    let outcome = RunRecords.outcome(run, newest: store.runs(limit: 1).first?.id == run.id, held: store.isHeld)
    print(
      "Run \(run.id): \(outcome), started \(StoreCommands.date(run.started))"
        + (RunRecords.duration(run).map { ", took \(formatSeconds($0))" } ?? "")
        + ", targets: " + TerminalText.escaped(RunsCommand.targets(run), keepingLines: false))
    print("Command: " + TerminalText.escaped(run.command, keepingLines: false))
    guard let recorded = store.summary(of: run.id) else {
      let why =
        store.summaryIsDamaged(of: run.id)
        ? "the store's summary of it cannot be read" : run.outcome == nil ? "it never ended" : "an older taskrun ran it"
      print("No summary was recorded for this run (\(why)).")
      if let note = RunRecords.errorNote(run) { print(note) }
      return
    }
    let reporter = PlainReporter(
      verbosity: .normal, color: ColorPolicy.decide(disabled: false, isTerminal: Session.outputIsTerminal),
      showStarts: false)
    reporter.printSummary(
      escaped(recorded.summary), omitted: (recorded.omittedSteps, recorded.omittedSeconds), toStandardOutput: true)
    if recorded.omittedFailures > 0 {
      print("(\(recorded.omittedFailures) more failures were not kept)")
    }
    if let note = RunRecords.errorNote(run) { print(note) }
  }

  /// The summary with every name the store gave escaped for the terminal (the reporter escapes
  /// errors and output itself; a run's own names came from its script, these from a file).
  static func escaped(_ summary: RunSummary) -> RunSummary {
    let e = { (text: String) in TerminalText.escaped(text, keepingLines: false) }
    func timing(_ t: RunSummary.Timing) -> RunSummary.Timing {
      var t = t
      t.name = e(t.name)
      if var reason = t.reason {
        (reason.after, reason.kind, reason.detail) = (e(reason.after), e(reason.kind), reason.detail.map(e))
        t.reason = reason
      }
      return t
    }
    var s = summary
    s.slowest = s.slowest.map(timing)
    s.criticalPath = s.criticalPath.map(timing)
    s.ended = s.ended.map(e)
    s.failures = s.failures.map {
      var f = $0
      (f.name, f.cause) = (e(f.name), f.cause.map(e))
      return f
    }
    return s
  }
}
