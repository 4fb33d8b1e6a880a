// Session: what one command of taskrun runs with (scheduler, sinks, live view, signals, Lua host) and its way out.
import FoundationEssentials
import Glibc
import LuaHost
import TaskEngine

/// Builds, once for `run`, `repl`, `test`, `graph` and the quiet reads of `CommandChoice`,
/// what a command runs with: the scheduler; its sinks (the progress display, `--events`,
/// `--trace`) and their tick; the signals; the Lua host with its answers (`ask` on a
/// terminal, `assumeYes`, writes captured under a live view); and the way out (`finish`:
/// what the run left is ended, Lua closed, the exit code chosen).
final class Session {
  let scheduler: Scheduler
  /// The live view, when progress is drawn on a terminal: every way out restores it.
  let liveView: LiveReporter?
  /// Lines per event, when the session shows its run (also what the live view scrolls).
  let lines: PlainReporter?
  let setup: HostSetup
  /// `--output group|keep-order`'s blocks (keep-order is told each run's operations).
  let blocks: OutputBlocks?

  /// The Lua host. Built on first use: a command checks its options and report files first,
  /// and their errors come before anything the host says (a lowered --memory). A command
  /// attaches the signals (`attachSignals`) where a Ctrl-C starts to be its run's.
  private(set) lazy var host: ScriptHost = makeHost()

  /// How a session shows its run.
  enum Display {
    /// A line per event (`PlainReporter`), under a live view when `live` (then with a tick);
    /// `through`: the `--output` mode's sink that stands before it (blocks, root failures).
    case lines(PlainReporter, live: Bool, through: EventSink? = nil)
    /// Only these sinks (test results, a read's messages).
    case sinks([EventSink])
  }

  /// What the host is made with.
  struct HostSetup {
    /// The script's `arg` (the words after `--`).
    var arguments: [String]
    /// Bytes the Lua heap may take (nil: the default cap).
    var memoryLimit: Int? = nil
    /// Every confirm(prompt) is answered yes.
    var assumeYes = false
    /// Whether confirm(prompt) asks on the terminal when standard input is one.
    var asksOnTerminal = false
    /// `--answer`: the choice every choose() that offers it takes at once.
    var answer: String? = nil
  }

  /// The run's control socket (`publish`), for taskrun status, watch, cancel, pause, resume.
  private var control: ControlSocket?
  /// The run's record in the run store, ended with the run's exit code.
  var recording: RunRecording?

  /// Publishes the run for `taskrun status` and the rest; a folder that is not private is
  /// refused with a note, and the run goes on unpublished.
  func publish(script: String) {
    do { control = try ControlSocket(scheduler: scheduler, script: script) } catch {
      lines?.note("not published for taskrun status: \(error)")
    }
  }

  init(jobs: Int?, keepGoing: Bool, display: Display, host setup: HostSetup) {
    scheduler = Scheduler(jobs: jobs ?? Environment.processorCount)
    scheduler.keepGoing = keepGoing
    self.setup = setup
    switch display {
    case .lines(let reporter, let live, let through):
      lines = reporter
      defer { scheduler.services.onEnd = { [unowned self] in reportEndedServices(again: false) } }
      blocks = through as? OutputBlocks
      let shown = through ?? reporter
      liveView = live ? LiveReporter(lines: shown, color: reporter.color) : nil
      if let liveView {
        scheduler.sinks.append(liveView)
        scheduler.tickInterval = 1.0 / 15
        Taskrun.drawing(liveView)
      } else {
        scheduler.sinks.append(shown)
      }
    case .sinks(let sinks):
      lines = nil
      liveView = nil
      blocks = nil
      scheduler.sinks = sinks
    }
  }

  /// The next cycle of `taskrun -w` after `previous` (ended with `endCycle`): a new scheduler
  /// and Lua host, the same live view, lines and report files, and the same services.
  init(following previous: Session, jobs: Int?, keepGoing: Bool, host setup: HostSetup) {
    scheduler = Scheduler(jobs: jobs ?? Environment.processorCount)
    scheduler.keepGoing = keepGoing
    self.setup = setup
    (lines, liveView, blocks) = (previous.lines, previous.liveView, previous.blocks)
    scheduler.sinks = previous.scheduler.sinks
    scheduler.tickInterval = previous.scheduler.tickInterval
    scheduler.services = previous.scheduler.services
    scheduler.processes.outputLimits = previous.scheduler.processes.outputLimits
    scheduler.processes.confinement = previous.scheduler.processes.confinement
  }

  /// Ends one cycle of `taskrun -w` without leaving: its record, its socket, its executors
  /// and its Lua state (finalizers run); the services and what is watched stay.
  func endCycle(code: Int32) {
    control?.end(summary: "exit status \(code)")
    control = nil
    recording?.end(code: code)
    recording = nil
    RunRecording.current = nil
    scheduler.endExecutors()
    host.close()
  }

  /// Whether standard output is a terminal that can show a live view (not TERM=dumb).
  static var outputIsTerminal: Bool { isatty(STDOUT_FILENO) != 0 && Environment.variable("TERM") != "dumb" }

  /// Opens `--events` and `--trace` (nil: not asked), relative paths in `folder` (where
  /// taskrun started), and adds them as sinks; an error says which file and why.
  /// `progressTicks`: the events include the run's progress, 15 times a second.
  func addReports(events: String?, trace: String?, folder: Int32, progressTicks: Bool = true) throws {
    if let events {
      let sink = try EventsReporter(path: events, folder: folder)
      // On the terminal the live view is on, the events' lines go above it, not through it.
      if events == "-", isatty(STDERR_FILENO) != 0, let view = liveView {
        view.eventsAbove = sink
        let sinks = scheduler.sinks
        scheduler.sinks = sinks  // the view's interests now include the events'
      } else {
        scheduler.sinks.append(sink)
      }
      if progressTicks { scheduler.tickInterval = 1.0 / 15 }
    }
    if let trace { scheduler.sinks.append(try TraceReporter(path: trace, folder: folder)) }
  }

  private func makeHost() -> ScriptHost {
    let host = ScriptHost(scheduler: scheduler, arguments: setup.arguments, memoryLimit: setup.memoryLimit)
    host.assumeYes = setup.assumeYes
    host.captureWrites = liveView != nil
    let onTerminal = setup.asksOnTerminal && isatty(STDIN_FILENO) != 0
    if onTerminal { host.ask = Terminal.ask }
    host.choiceAnswers = ChoiceAnswers(answer: setup.answer, ask: onTerminal ? Terminal.choose : nil)
    return host
  }

  /// Lets what a stop left running end and be reported: the run's summary, or nil when no
  /// run was under way.
  func settle() -> RunSummary? { host.settle() }

  /// A load that stopped at the top level because the run was halted (Ctrl-C) or os.exit
  /// was called: what it started is cancelled, let end and reported, and the session ends
  /// with 130 (or os.exit's status). `noteInterrupted`: a line says so when nothing else did.
  /// Returns when the load was not stopped so.
  func finishIfStopped(noteInterrupted: Bool) {
    guard host.exitCode != nil || scheduler.halted else { return }
    let summary = settle()
    if noteInterrupted && summary == nil && host.exitCode == nil { lines?.note("interrupted") }
    finish(code: ExitCode.interrupted.rawValue)
  }

  /// The end of every command that ran work: whatever the run left is ended (no descendant
  /// outlives taskrun), Lua's finalizers run, and the process exits with `code` (or the
  /// status `os.exit` asked for). A signal while finalizers run exits at once: a finalizer
  /// that loops cannot hold taskrun, and hooks do not run inside finalizers.
  func finish(code: Int32) -> Never {
    control?.end(summary: host.exitCode.map { "os.exit(\($0))" } ?? "exit status \(code)")
    reportEndedServices(again: false)
    let code = code == 0 && serviceEnded ? ExitCode.failure.rawValue : code
    recording?.end(code: host.exitCode ?? code)
    stopServices()
    scheduler.processes.endDescendants()
    scheduler.endExecutors()  // Slurm jobs of the run are cancelled by name
    SignalWatcher.shared.attach(inbox: scheduler.inbox, processes: scheduler.processes) { _, _ in
      Taskrun.exitNow(ExitCode.interrupted.rawValue)
    }
    host.close()
    let status = host.exitCode ?? code
    // An --events or --trace file that could not be written (ReportFile said why): the
    // run's record is incomplete, so the run did not succeed as asked.
    Taskrun.leave(
      status == 0 && ReportFile.failures.load(ordering: .sequentiallyConsistent) > 0
        ? ExitCode.failure.rawValue : status)
  }

  /// A service ended by itself while the run needed it (the run then exits 1).
  private(set) var serviceEnded = false

  /// Services that ended by themselves: each said with its output's end (`again`: under
  /// `-w`, it starts again with the next cycle).
  func reportEndedServices(again: Bool) {
    for service in scheduler.services.takeEnded() {
      serviceEnded = true
      let message =
        "service \(service.name) \(service.ending) (its output: \(service.log))"
        + (again ? "; it starts again with the next cycle" : "")
      SpillFolder.shared.keepNamed(in: message)  // the log a message names stays after taskrun
      lines?.error(message)
      let tail = ServiceKeeper.tail(of: service.log, bytes: 1000)
      for line in tail.split(separator: "\n").suffix(5) { lines?.failure("    | " + PlainReporter.shown(line)) }
    }
  }

  /// The run's services are stopped (TERM, KILL after the grace), each with a line.
  func stopServices() {
    for name in scheduler.services.stopAll(grace: scheduler.killGrace) {
      lines?.note("stopped service \(name)")
    }
  }

  /// The exit code of a run that ended with `summary`.
  static func exitCode(of summary: RunSummary) -> ExitCode {
    summary.interrupted ? .interrupted : summary.allSucceeded ? .success : .failure
  }
}
