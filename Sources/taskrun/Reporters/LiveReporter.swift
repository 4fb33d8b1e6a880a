// LiveReporter: the terminal view: finished operations scroll above a live region that shows
// the overall bar, counts, elapsed time and ETA, and one line per running operation.
import CTerminal
import FoundationEssentials
import Glibc
import Synchronization
import TaskEngine

/// Redraws at most `rate` times a second; everything it shows comes from events. While it is
/// active, standard output is whole-buffered: lines for finished operations and output wait
/// with the region's clearing for the next frame, and the terminal gets both in one write, so
/// a run of many short operations costs a frame per tick, not a frame per operation.
final class LiveReporter: EventSink {
  static let hideCursor = "\u{1B}[?25l"
  static let showCursor = "\u{1B}[?25h"
  static let spinner = Array("⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏")
  /// Set when taskrun continues after Ctrl-Z: the shell wrote below the region meanwhile, so
  /// the next draw starts a new region where the cursor is, with the cursor hidden again.
  static let resumed = Atomic<Bool>(false)

  // Its fields are touched by the scheduler's thread alone, by loads, stores and appends: no
  // access can overlap another, so they skip the dynamic exclusivity check (see OperationNode).
  /// What scrolls above the region: the line reporter, or an `--output` mode's sink before it.
  private let lines: any EventSink
  private let color: ColorPolicy
  private let interval: Double
  private let taskbar: TaskbarProgress?
  @exclusivity(unchecked) private var running: [Row] = []
  @exclusivity(unchecked) private var groups: Set<String> = []
  /// The run's counts: from `runProgress`, and moved at once by starts and finishes so they
  /// never lag the lines printed above them.
  @exclusivity(unchecked) private var progress = RunProgress()
  /// Activity indicators with at least one executing operation, in the order they appeared.
  @exclusivity(unchecked) private var activities: [(label: String, count: Int)] = []
  @exclusivity(unchecked) private var now = 0.0
  @exclusivity(unchecked) private var lastDraw = -1.0
  @exclusivity(unchecked) private var regionHeight = 0
  @exclusivity(unchecked) private var frame = 0
  @exclusivity(unchecked) private var active = false
  @exclusivity(unchecked) private var prompting = false

  /// A running operation and its own progress, as the last progress event said.
  struct Row {
    var name: String
    var start: Double
    var progress: ProgressSnapshot?
    /// Its command's place in a cluster, when it runs there.
    var remote: RemoteState?
    /// The 90th percentile of its recorded durations: past it, the row says it is slow.
    var usual: Double?

    init(name: String, start: Double, usual: Double? = nil) {
      (self.name, self.start, self.usual) = (name, start, usual)
    }
  }

  init(
    lines: any EventSink, color: ColorPolicy, rate: Double = 15,
    taskbar: TaskbarProgress? = TaskbarProgress.forTerminal()
  ) {
    self.lines = lines
    self.color = color
    self.interval = 1 / rate
    self.taskbar = taskbar
    ct_show_cursor_on_crash()
  }

  /// `-w`: the cycle and what started it, first on the overall line ("cycle 3 · src/a.c").
  var heading: String?

  /// `--events -` with standard error on the same terminal: each event's line is written above
  /// the region, as the lines of finished operations are, not into it.
  var eventsAbove: EventSink?

  /// Rows need the starts of what still runs at a frame, finished lines the successes since
  /// the last one; no row says why it started. Output and causes go to the lines (an
  /// `--output` mode's). Events written above read what they read.
  var interests: EventInterests {
    let mine = lines.interests.intersection([.output, .causes])  // -v and blocks; --output errors
    return eventsAbove.map { $0.interests.union(.startsAtTick).union(mine) }
      ?? mine.union([.startsAtTick, .successesAtTick])
  }

  func receive(_ event: RunEvent) {
    if let events = eventsAbove {
      if case .tick = event {
      } else {  // a tick writes no line
        clear()
        fflush(nil)  // the region's clearing reaches the terminal before the line
        events.receive(event)
      }
    }
    switch event {
    case .runStart:
      progress = RunProgress()
      lastDraw = -1  // a REPL's next run() counts time from 0 again: the first frame is due
      activate()
    case .operationStart(let time, let name, _, _, _, let isGroup, _, let usual):
      now = time
      activate()  // a REPL's next run(): the view comes back
      if isGroup { groups.insert(name); return }
      running.append(Row(name: name, start: time, usual: usual))
      progress.running += 1
      progress.pending = max(0, progress.pending - 1)
      draw(force: false)
    case .operationFinish(let time, let name, let outcome, _, _):
      now = time
      if groups.isEmpty || groups.remove(name) == nil {  // hashing a name per operation costs
        ended(name)
        switch outcome {
        case .succeeded, .skipped: progress.done += 1
        case .failed: progress.failed += 1
        case .cancelled: progress.failed += 1; progress.cancelled += 1
        }
      }
      above { lines.receive(event) }
    case .successes(let time, let operations):
      now = time
      for op in operations { ended(op.name) }
      progress.done += operations.count
      above { lines.receive(event) }
    case .output, .message:
      above { lines.receive(event) }
    case .operationRetry(let time, let name, _, _, _):
      now = time
      if let index = running.firstIndex(where: { $0.name == name }) {
        running.remove(at: index)
        progress.running = max(0, progress.running - 1)
        progress.pending += 1
      }
      above { lines.receive(event) }
    case .remoteState(let time, let name, let state):
      now = time
      if let index = running.firstIndex(where: { $0.name == name }) { running[index].remote = state }
    case .operationProgress(let time, let name, let snapshot):
      now = time
      if let index = running.firstIndex(where: { $0.name == name }) { running[index].progress = snapshot }
    case .activity(let time, let label, let count):
      now = time
      if count > 0 {
        if let index = activities.firstIndex(where: { $0.label == label }) {
          activities[index].count = count
        } else {
          activities.append((label, count))
        }
      } else {
        activities.removeAll { $0.label == label }
      }
    case .runProgress(let time, let value):
      now = time
      progress = value
      if value.stopping && prompting {  // Ctrl-C at a question: end its line, go on
        prompting = false
        write(Self.hideCursor)
        above { lines.receive(event) }
      }
    case .tick(let time):
      now = time
      draw(force: false)
    case .operationChange(let time, _, let change):
      now = time
      if change == .paused || change == .resumed { above { lines.receive(event) } }
    case .queueChange(let time, _, _):
      now = time
    case .prompt(let time, let text):
      now = time
      if text != nil {
        clear()  // the question is asked alone, below the scrolled lines
        write(Self.showCursor)
        prompting = true
        fflush(nil)
        lines.receive(event)  // which holds other output until the answer
      } else {
        prompting = false
        write(Self.hideCursor)
        above { lines.receive(event) }
      }
    case .runFinish:
      clear()
      taskbar?.clear()
      active = false
      write(Self.showCursor)
      lines.receive(event)
      ct_buffer_stdout(0)
    }
  }

  /// Restores the terminal (the cursor) if the run ends without `runFinish`, or between a
  /// REPL's evaluations; the view comes back when an operation starts again.
  func restore() {
    guard active else { return }
    clear()
    taskbar?.clear()
    write(Self.showCursor)
    ct_buffer_stdout(0)
    active = false
    running.removeAll()
    groups.removeAll()
  }

  private func activate() {
    guard !active else { return }
    active = true
    ct_buffer_stdout(1)
    write(Self.hideCursor)
  }

  /// An operation ended: its row goes, or it was still counted as pending (its start was
  /// never shown: it began and ended between two frames).
  private func ended(_ name: String) {
    if let index = running.firstIndex(where: { $0.name == name }) {
      running.remove(at: index)
      progress.running = max(0, progress.running - 1)
    } else {
      progress.pending = max(0, progress.pending - 1)
    }
  }

  /// Prints what `body` prints above the live region; the region comes back with the next
  /// frame (at once if one is due, and something is still running or pending: a run whose
  /// counts say it is over is about to end, and the fraction, which comes with the
  /// scheduler's tick, may not have caught up with them yet).
  private func above(_ body: () -> Void) {
    clear()
    body()
    if progress.running > 0 || progress.pending > 0 { draw(force: false) }
  }

  /// Erases the region, leaving the cursor where it started. Not with an erase-below from the
  /// region's first column: when the region starts on the top row that is "clear the screen",
  /// which tmux (scroll-on-clear) and other terminals answer by pushing the whole screen into
  /// the scrollback, a copy per frame. The first line is erased alone (EL), then everything
  /// below from its second column (ED), and the cursor goes back to the first column.
  private func clear() {
    guard regionHeight > 0 else { return }
    write("\r" + (regionHeight > 1 ? "\u{1B}[\(regionHeight - 1)A" : "") + "\u{1B}[K\u{1B}[2G\u{1B}[J\r")
    regionHeight = 0
  }

  private func draw(force: Bool) {
    guard active, !prompting, force || now - lastDraw >= interval else { return }
    lastDraw = now
    frame += 1
    if Self.resumed.exchange(false, ordering: .sequentiallyConsistent) {
      regionHeight = 0
      write(Self.hideCursor)
    }
    // Lines are cut to the width, however narrow: a line that wraps takes two rows, and the
    // next frame's clearing, which counts one a line, would leave the second behind.
    let columns = Int(ct_columns(STDOUT_FILENO))
    let width = columns > 0 ? columns : 80
    let rows = Int(ct_rows(STDOUT_FILENO))
    // The region never reaches the top row: the overall line stays on screen.
    let height = max(1, (rows > 0 ? rows : 24) - 1)
    var region = LiveRegion(color: color, frame: frame, now: now)
    region.heading = heading
    let shown =
      region
      .lines(progress: progress, activities: activities, running: running, height: height, width: width)
    clear()
    write(shown.joined(separator: "\n"))
    regionHeight = shown.count
    taskbar?.show(progress)
    fflush(nil)
  }

  private func write(_ text: String) { print(text, terminator: "") }
}
