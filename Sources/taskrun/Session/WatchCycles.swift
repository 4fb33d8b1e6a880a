// WatchCycles: `taskrun -w`: a run, then a cycle for each settled change of what it reads, until Ctrl-C.
import FoundationEssentials
import Glibc
import LuaHost
import TaskEngine

/// Runs the workflow in cycles. Each cycle is a run of its own (a new Lua state and scheduler,
/// its own record in the run store) that resumes the cycle before it: what declares files
/// runs when its fingerprint changed, what declares nothing when something it depends on ran
/// again, and services stay up unless they must restart. Between cycles it waits for a change
/// of the watch set (`WatchSet`): the selected operations' inputs, their depfiles'
/// prerequisites, the script and its Lua files. A change waits `--debounce` milliseconds of
/// quiet (a second at most while changes go on); one during a cycle cancels the running
/// operations whose inputs it touched and makes one more cycle. Ctrl-C ends it all: what
/// runs is stopped, then the services, and taskrun exits 130.
final class WatchCycles {
  private let options: RunOptions
  private let reporter: PlainReporter
  private let script: String
  private let targets: [String]
  /// Seconds of quiet before a change starts a cycle, and the longest a burst may delay it.
  private let debounce: Double
  private var longest: Double { max(1, debounce * 10) }
  private let folder = ProcessRunner.currentDirectory()
  private var cycle = 0
  private var set = WatchSet.empty
  /// What the watcher could not do, as last said.
  private var lastShortfall = FileWatcher.Shortfall()
  /// The burst of changes being waited out (scheduler clock), and whether it settled.
  private var lastChange = 0.0
  private var firstChange: Double?
  private var settled = false
  private var running = false
  /// A change came while a cycle ran; how many cycles in a row such changes started.
  private var changedWhileRunning = false, changedWhileIdle = false
  private var ownChanges = 0
  static let ownChangesLimit = 3

  static let defaultDebounce = 100

  init(options: RunOptions, reporter: PlainReporter, script: String, targets: [String]) {
    (self.options, self.reporter, self.script, self.targets) = (options, reporter, script, targets)
    debounce = Double(options.debounce ?? Self.defaultDebounce) / 1000
  }

  func run(first: Session) throws -> Never {
    guard script != "-" else {
      reporter.error("-w cannot watch a script read from standard input: give its file")
      throw Taskrun.Exit(.usage)
    }
    let watcher: FileWatcher
    do { watcher = try FileWatcher() } catch {
      reporter.error("-w: \(error)")
      throw Taskrun.Exit(.usage)
    }
    let events = first.scheduler.sinks.lazy.compactMap { $0 as? EventsReporter }.first
    for trace in first.scheduler.sinks.compactMap({ $0 as? TraceReporter }) { trace.keepsOpen = true }
    var session = first
    var previous: Session?
    var changed: [String] = []
    while true {
      cycle += 1
      // The folder again by its path: one removed and made again is the new one.
      if chdir(folder) != 0 {
        reporter.error("-w: cannot go to \(PlainReporter.text(folder)): \(String(cString: strerror(errno)))")
      }
      announce(changed, in: session, events: events)
      let scheduler = session.scheduler
      watcher.attach(to: scheduler)
      scheduler.services.attach(to: scheduler)
      watcher.onChange = { [unowned self, unowned scheduler, unowned watcher] in noted(scheduler, watcher) }
      scheduler.services.onEnd = { [unowned session] in session.reportEndedServices(again: true) }
      let (code, ran) = runCycle(session, after: previous, watcher: watcher)
      session.endCycle(code: code)
      scheduler.processes.endStrays()  // what the cycle's commands left behind (not the services)
      while true {
        if !settled {
          let files = set.fileCount
          reporter.note(
            "watching \(files) file\(files == 1 ? "" : "s") in \(watcher.count) folder\(watcher.count == 1 ? "" : "s")"
              + " for changes (Ctrl-C ends)")
        }
        scheduler.wait(until: { settled || scheduler.halted })
        if scheduler.halted { session.finish(code: ExitCode.interrupted.rawValue) }
        ownChanges = changedWhileRunning && !changedWhileIdle ? ownChanges + 1 : 0
        (changedWhileRunning, changedWhileIdle) = (false, false)
        guard ownChanges >= Self.ownChangesLimit else { break }
        // Each cycle changed what the next one reads (an operation writes an input of its
        // own): those changes are let go, and the next cycle waits for one made outside.
        reporter.note(
          "the last \(ownChanges) cycles were each started by changes made while the cycle before ran "
            + "(\(describe(watcher.take()))): does an operation write an input of its own? "
            + "Waiting for a change made outside a cycle")
        (settled, firstChange, ownChanges) = (false, nil, 0)
      }
      (settled, firstChange) = (false, nil)
      changed = watcher.take()
      // The same store goes on; a cycle whose script did not load is not resumed (the one it
      // resumed is, by the next).
      if let memory = session.scheduler.memory {
        memory.continuedRun = ran ? memory.run : memory.resumed?.run
        previous = session
      }
      session = Session(
        following: session, jobs: options.jobs, keepGoing: options.keepGoing, host: first.setup)
    }
  }

  /// One cycle: the script loaded, the watch set made, the run. Its exit code (a script that
  /// no longer loads is a cycle that failed: the next change may mend it).
  private func runCycle(_ session: Session, after previous: Session?, watcher: FileWatcher) -> (Int32, ran: Bool) {
    running = true
    defer { running = false }
    do {
      let selected = try options.load(
        session, script: script, targets: targets, reporter: reporter, after: previous)
      guard session.scheduler.memory?.store != nil else {
        reporter.error("-w needs the run store, which cannot be used here (the warning above says why)")
        session.finish(code: ExitCode.usage.rawValue)
      }
      stopUndeclaredServices(session)
      watch(session, selected, watcher)
      let summary = session.host.run(selected)
      if summary.interrupted { session.finish(code: ExitCode.interrupted.rawValue) }
      watch(session, selected, watcher)  // what depfiles named in this cycle
      return (Session.exitCode(of: summary).rawValue, true)
    } catch {
      if set.fileCount == 0 { set = WatchSet.of([], extra: [script], discovered: { _ in [] }, all: [], folder: folder) }
      watcher.watch(set)
      return ((error as? Taskrun.Exit)?.code ?? ExitCode.usage.rawValue, session.scheduler.runStartTime != nil)
    }
  }

  /// Services of earlier cycles that the script no longer declares are stopped.
  private func stopUndeclaredServices(_ session: Session) {
    let keeper = session.scheduler.services
    for service in keeper.running where !(session.scheduler.operation(named: service.name)?.body is ServiceBody) {
      keeper.stop(service.name, grace: session.scheduler.killGrace)
      reporter.note("stopped service \(service.name): the script no longer declares it")
    }
  }

  /// Watches what `selected` (and what they need) read, the script and its Lua files.
  private func watch(_ session: Session, _ selected: [OperationNode], _ watcher: FileWatcher) {
    var needed: [OperationNode] = []
    var seen = Set<ObjectIdentifier>()
    var stack = selected
    while let op = stack.popLast() {
      guard seen.insert(ObjectIdentifier(op)).inserted else { continue }
      needed.append(op)
      stack += op.dependencies
      stack += op.children
    }
    let memory = session.scheduler.memory
    set = WatchSet.of(
      needed, extra: [script] + session.host.loadedLuaFiles(),
      discovered: { memory?.discoveredPaths(of: $0) ?? [] }, all: session.scheduler.operations, folder: folder)
    let shortfall = watcher.watch(set)
    guard shortfall != lastShortfall else { return }  // said once, not at every cycle
    lastShortfall = shortfall
    if shortfall.capped {
      reporter.note(
        "-w watches at most \(WatchSet.maxFolders) folders: changes in folders past them are not seen "
          + "(name fewer files in inputs)")
    }
    if let first = shortfall.refused.first {
      let more = shortfall.refused.count - 1
      reporter.note(
        "-w cannot watch \(TerminalText.escaped(shortened(first.folder)))\(more > 0 ? " and \(more) more" : ""): "
          + first.reason)
    }
  }

  /// A change was seen: a cycle starts once `debounce` passed without another (or `longest`
  /// after the first of a burst). During a cycle, the running operations it concerns stop.
  private func noted(_ scheduler: Scheduler, _ watcher: FileWatcher) {
    let now = scheduler.clock.now
    lastChange = now
    if firstChange == nil { firstChange = now }
    if running { changedWhileRunning = true } else { changedWhileIdle = true }
    _ = scheduler.after(debounce) { [unowned self, unowned scheduler, unowned watcher] in
      guard watcher.hasChanges, !settled, let first = firstChange else { return }
      let now = scheduler.clock.now
      guard now - lastChange >= debounce * 0.999 || now - first >= longest else { return }
      settled = true
      guard running else { return }
      let stopped = scheduler.cancel(affectedBy: watcher.pending, folder: folder)
      reporter.note(
        "changed during cycle \(cycle): \(describe(watcher.pending)); one more cycle follows"
          + (stopped.isEmpty
            ? "" : " (stopped \(stopped.prefix(3).joined(separator: ", "))\(stopped.count > 3 ? ", …" : ""))"))
    }
  }

  /// A cycle starts: a line and the live view say which and why; the events too.
  private func announce(_ changed: [String], in session: Session, events: EventsReporter?) {
    events?.cycleStarts(cycle, changed: changed.map { shortened($0) }, at: 0)
    guard cycle > 1 else {
      session.liveView?.heading = "cycle 1"
      return
    }
    let what = describe(changed)
    reporter.note("cycle \(cycle): \(what) changed")
    // Short: the counts and the ETA after it must still fit an 80-column line.
    session.liveView?.heading = "cycle \(cycle) · " + (what.count > 32 ? what.prefix(31) + "…" : what)
  }

  /// "src/a.c", "src/a.c and 3 more".
  private func describe(_ paths: [String]) -> String {
    guard let first = paths.first else { return "something" }
    let text = TerminalText.escaped(shortened(first))  // a name's newline must not make a line
    return paths.count == 1 ? text : "\(text) and \(paths.count - 1) more"
  }

  /// A path as the workflow's folder sees it.
  private func shortened(_ path: String) -> String {
    path.hasPrefix(folder + "/") ? String(path.dropFirst(folder.count + 1)) : path
  }
}
