// ReportCommand: `taskrun report [ID] [-o FILE]`, one run from the run store as a self-contained HTML page.
import ArgumentParser
import FoundationEssentials
import Glibc
import TaskEngine

struct ReportCommand: ParsableCommand, InvokedCommand {
  static let configuration = CommandConfiguration(
    commandName: "report",
    abstract: "Write one run from the run store as a self-contained HTML page (timeline, critical path, failures).",
    usage: "taskrun report [-C DIR] [-f FILE | SCRIPT] [ID] [-o FILE]",
    discussion: """
      ID is a run's id or last (the default). The page needs no network: its CSS and script are \
      inline. Without -o it is taskrun-report-ID.html in the current folder; -o - writes it to \
      standard output.
      """)

  @OptionGroup var place: ScriptPlace

  @Option(
    name: [.customShort("o"), .long],
    help: ArgumentHelp("The file to write (- for standard output).", valueName: "file"))
  var output: String?

  @Argument(help: ArgumentHelp("The workflow script, then the run.", valueName: "script-and-run"))
  var words: [String] = []

  /// How many kept runs before the reported one its history reads.
  static let historyRuns = 20

  func run(_ invocation: Invocation, choice: CommandChoice) throws {
    // A relative -o is where taskrun started, not where the script is found.
    var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
    let startFolder = getcwd(&buffer, buffer.count).map { String(cString: $0) } ?? "."
    let (store, rest, script) = try RunRecords.open(place, words: words, none: RunRecords.noRuns)
    if let output,
      let problem = ScriptOverwriteCheck.problem(option: "-o", report: output, script: script, folder: startFolder)
    {
      throw StoreCommands.usage(TerminalText.escaped(problem))
    }
    guard rest.count <= 1 else { throw StoreCommands.usage("taskrun report takes one run: an id or last") }
    let run = try RunRecords.run(rest.first ?? "last", in: store)
    let newest = store.runs(limit: 1).first?.id == run.id
    var page = ReportPage(
      run: run, outcome: RunRecords.outcome(run, newest: newest, held: store.isHeld),
      recorded: store.summary(of: run.id), bars: [], history: [:])
    for (_, a) in store.attempts(run: run.id) {
      // A start or duration that is none (a doctored store) is not drawn.
      let start = a.started - run.started
      guard start.isFinite, start >= 0, start < 1e9 else { continue }
      let duration = RunsDiff.seconds(a) ?? 0
      page.bars.append(
        TimelineBar(
          name: a.operation, attempt: a.attempt, outcome: a.outcome, start: start, duration: duration, why: a.why,
          error: a.error))
    }
    let earlier = store.runs(limit: 10_000).filter { $0.id < run.id }.prefix(Self.historyRuns)
    for older in earlier {
      for (_, a) in store.attempts(run: older.id) where a.outcome == "succeeded" && a.attempt > 0 {
        if let d = RunsDiff.seconds(a), d >= 0.01 { page.history[a.operation, default: []].append(d) }
      }
    }
    let html = page.render()
    if output == "-" {
      print(html, terminator: "")
      throw Taskrun.Exit(.success)
    }
    let name = output ?? "taskrun-report-\(run.id).html"
    let path = name.hasPrefix("/") ? name : startFolder + "/" + name
    let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
    guard fd >= 0 else {
      TerminalText.writeMessage(
        "taskrun: cannot write \(TerminalText.escaped(name)): \(String(cString: strerror(errno)))")
      throw Taskrun.Exit(.failure)
    }
    let bytes = Array(html.utf8)
    var done = 0
    while done < bytes.count {
      let n = bytes[done...].withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
      if n < 0 && errno == EINTR { continue }
      guard n > 0 else {
        close(fd)
        TerminalText.writeMessage(
          "taskrun: cannot write \(TerminalText.escaped(name)): \(String(cString: strerror(errno)))")
        throw Taskrun.Exit(.failure)
      }
      done += n
    }
    close(fd)
    print("Wrote the report of run \(run.id) to \(TerminalText.escaped(name))")
    throw Taskrun.Exit(.success)
  }
}
