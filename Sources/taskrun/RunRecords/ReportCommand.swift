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
      standard output. The page goes to a new file in that folder renamed over the name (a link \
      there is replaced, not followed); the script and the workflow's .taskrun/ are refused.
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
    // The words and -o are judged before the store is looked at: usage errors with or without one.
    let (store, rest, script) = try RunRecords.open(
      place, words: words,
      check: { rest, script, folder in
        guard rest.count <= 1 else { throw StoreCommands.usage("taskrun report takes one run: an id or last") }
        _ = try RunRecords.runID(rest.first ?? "last")
        if let output { try Self.checkOutput(output, script: script, workflowFolder: folder, startFolder: startFolder) }
      }, none: RunRecords.noRuns)
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
    if output == nil {
      let folder = RunStoreAccess.workflowFolder(of: script) ?? startFolder
      try Self.checkOutput(name, script: script, workflowFolder: folder, startFolder: startFolder, named: false)
    }
    let path = name.hasPrefix("/") ? name : startFolder + "/" + name
    if let problem = Self.write(Array(html.utf8), to: path) {
      TerminalText.writeMessage("taskrun: cannot write \(TerminalText.escaped(name)): \(problem)")
      throw Taskrun.Exit(.failure)
    }
    print("Wrote the report of run \(run.id) to \(TerminalText.escaped(name))")
    throw Taskrun.Exit(.success)
  }

  /// Why the page may not be written to `output` (relative to `startFolder`), as a usage error
  /// (exit 2): it is the script, or it is in (or is) the workflow's run store folder `.taskrun/`,
  /// links and `..` followed: the page would replace the store (and a checkpoint of its WAL
  /// would then lose every run).
  static func checkOutput(
    _ output: String, script: String, workflowFolder: String, startFolder: String, named: Bool = true
  ) throws {
    guard output != "-" else { return }
    if let problem = ScriptOverwriteCheck.problem(option: "-o", report: output, script: script, folder: startFolder) {
      throw StoreCommands.usage(TerminalText.escaped(problem))
    }
    let storeFolder = ReportFile.resolved(
      (workflowFolder == "/" ? "" : workflowFolder) + "/" + RunStore.folderName)
    let target = ReportFile.resolved(output.hasPrefix("/") ? output : startFolder + "/" + output)
    if target == storeFolder || target.hasPrefix(storeFolder + "/") {
      throw StoreCommands.usage(
        (named ? "-o '" : "the report's file '") + TerminalText.escaped(output) + "' is in the run store's folder "
          + TerminalText.escaped(storeFolder)
          + ": writing there could replace the store (name a file elsewhere with -o)")
    }
  }

  /// Writes `bytes` to `path` without ever writing through what is there: to a new file in the
  /// same folder (O_CREAT|O_EXCL|O_NOFOLLOW, mode 0644 less the umask), then renamed over
  /// `path`. A link planted at `path` is replaced, never followed; a reader sees the old file
  /// or the whole new one. Written in place, as before: a `path` named under /dev/ or /proc/
  /// (/dev/stdout, /dev/fd/3: renaming over it would replace that name, for root), and one
  /// that leads to a device, pipe or socket (no file a link could make us replace).
  /// Returns why it could not, or nil.
  static func write(_ bytes: [UInt8], to path: String) -> String? {
    let named = Confinement.standardized(path)
    var info = stat()
    let special = stat(path, &info) == 0 && info.st_mode & S_IFMT != S_IFREG && info.st_mode & S_IFMT != S_IFDIR
    if named.hasPrefix("/dev/") || named.hasPrefix("/proc/") || special {
      let fd = open(path, O_WRONLY | O_NOCTTY | O_CLOEXEC)
      guard fd >= 0 else { return String(cString: strerror(errno)) }
      var opened = stat()
      if fstat(fd, &opened) == 0, opened.st_mode & S_IFMT != S_IFREG || !special {
        var out = stat()
        if fstat(STDOUT_FILENO, &out) == 0, out.st_dev == opened.st_dev, out.st_ino == opened.st_ino {
          // Our own standard output (/dev/stdout, a redirection to a file): written at its
          // offset, not over what it holds.
          close(fd)
          return writeAll(bytes, to: STDOUT_FILENO)
        }
        // Another regular file reached under /dev or /proc is truncated, as `>` does.
        if opened.st_mode & S_IFMT == S_IFREG { ftruncate(fd, 0) }
        let problem = writeAll(bytes, to: fd)
        close(fd)
        return problem
      }
      close(fd)  // a device that became a file since: written as a file is, below
    }
    let slash = path.lastIndex(of: "/")!
    let folder = slash == path.startIndex ? "/" : String(path[..<slash])
    var temporary = ""
    var fd: Int32 = -1
    for _ in 0..<100 {
      temporary = folder + "/.taskrun-report-" + String(UInt64.random(in: 0...UInt64.max), radix: 36) + ".tmp"
      fd = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o644)
      if fd >= 0 || errno != EEXIST { break }
    }
    guard fd >= 0 else { return String(cString: strerror(errno)) }
    if let problem = writeAll(bytes, to: fd) {
      close(fd)
      unlink(temporary)
      return problem
    }
    guard close(fd) == 0, rename(temporary, path) == 0 else {
      let problem = String(cString: strerror(errno))
      unlink(temporary)
      return problem
    }
    return nil
  }

  /// Writes all of `bytes` to `fd`; why it could not, or nil.
  private static func writeAll(_ bytes: [UInt8], to fd: Int32) -> String? {
    var done = 0
    while done < bytes.count {
      let n = bytes[done...].withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
      if n < 0 && errno == EINTR { continue }
      guard n > 0 else { return String(cString: strerror(n < 0 ? errno : ENOSPC)) }
      done += n
    }
    return nil
  }
}
