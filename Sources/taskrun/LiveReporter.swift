// LiveReporter: the terminal view: finished operations scroll above a live region that shows
// the overall bar, counts, elapsed time and ETA, and one line per running operation.
import CTerminal
import Foundation
import Synchronization
import TaskEngine

/// Redraws at most `rate` times a second, on ticks; everything it shows comes from events.
final class LiveReporter: EventSink {
  static let hideCursor = "\u{1B}[?25l"
  static let showCursor = "\u{1B}[?25h"
  static let spinner = Array("⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏")
  /// Set when taskrun continues after Ctrl-Z: the shell wrote below the region meanwhile, so
  /// the next draw starts a new region where the cursor is, with the cursor hidden again.
  static let resumed = Atomic<Bool>(false)

  private let lines: PlainReporter          // what scrolls above the region
  private let color: ColorPolicy
  private let interval: Double
  private var running: [(name: String, start: Double, progress: OperationProgress?)] = []
  private var progress = RunProgress()
  /// Activity indicators with at least one executing operation, in the order they appeared.
  private var activities: [(label: String, count: Int)] = []
  private var now = 0.0
  private var lastDraw = -1.0
  private var regionHeight = 0
  private var frame = 0
  private var active = false
  private var prompting = false

  /// An operation's own progress, as the last progress event said.
  struct OperationProgress {
    var fraction: Double
    var indeterminate: Bool
    var description: String
  }

  init(lines: PlainReporter, color: ColorPolicy, rate: Double = 15) {
    self.lines = lines
    self.color = color
    self.interval = 1 / rate
    ct_show_cursor_on_crash()
  }

  func receive(_ event: RunEvent) {
    switch event {
    case .runStart:
      active = true
      write(Self.hideCursor)
    case .operationStart(let time, let name, _, _, _, _):
      now = time
      if !active {  // a REPL's next run(): the view comes back
        active = true
        write(Self.hideCursor)
      }
      running.append((name, time, nil))
      draw(force: false)
    case .operationFinish(let time, let name, _, _, _, _, _, _):
      now = time
      running.removeAll { $0.name == name }
      above { lines.receive(event) }
    case .output, .message:
      above { lines.receive(event) }
    case .operationRetry(let time, let name, _, _, _):
      now = time
      running.removeAll { $0.name == name }
      above { lines.receive(event) }
    case .operationProgress(let time, let name, let p):
      now = time
      if let index = running.firstIndex(where: { $0.name == name }) {
        let text = p.additionalDescription.isEmpty ? p.description : p.additionalDescription
        running[index].progress = OperationProgress(fraction: p.fraction, indeterminate: p.indeterminate,
                                                    description: text)
      }
    case .activity(let time, let label, let count):
      now = time
      if count > 0 {
        if let index = activities.firstIndex(where: { $0.label == label }) { activities[index].count = count }
        else { activities.append((label, count)) }
      } else {
        activities.removeAll { $0.label == label }
      }
    case .runProgress(let time, let value):
      now = time
      progress = value
    case .tick(let time):
      now = time
      draw(force: false)
    case .prompt(let time, let text):
      now = time
      if text != nil {
        clear()                      // the question is asked below the scrolled lines
        write(Self.showCursor)
        prompting = true
      } else {
        prompting = false
        write(Self.hideCursor)
        draw(force: true)
      }
    case .runFinish:
      clear()
      active = false
      write(Self.showCursor)
      lines.receive(event)
    }
  }

  /// Restores the terminal (the cursor) if the run ends without `runFinish`, or between a
  /// REPL's evaluations; the view comes back when an operation starts again.
  func restore() {
    guard active else { return }
    clear()
    write(Self.showCursor)
    active = false
    running.removeAll()
  }

  /// Prints what `body` prints above the live region, then redraws the region.
  private func above(_ body: () -> Void) {
    clear()
    body()
    draw(force: true)
  }

  private func clear() {
    guard regionHeight > 0 else { return }
    write("\r" + (regionHeight > 1 ? "\u{1B}[\(regionHeight - 1)A" : "") + "\u{1B}[J")
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
    let width = max(20, Int(ct_columns(STDOUT_FILENO)))
    var region = [overallLine(width: width)]
    for activity in activities {
      let spin = String(Self.spinner[(frame + activity.label.count) % Self.spinner.count])
      region.append("  \(color.paint(spin, "35")) \(activity.label) (\(activity.count))")
    }
    let shown = running.prefix(max(1, 12))
    for op in shown { region.append(operationLine(op, width: width)) }
    if running.count > shown.count { region.append("  … and \(running.count - shown.count) more running") }
    clear()
    write(region.map { fit($0, width) }.joined(separator: "\n"))
    regionHeight = region.count
  }

  private func overallLine(width: Int) -> String {
    let bar = self.bar(progress.fraction, width: 24)
    var parts = ["\(Int(progress.fraction * 100))%".leftPadded(4), "\(progress.done) done",
                 "\(progress.running) running", "\(progress.pending) pending"]
    if progress.failed > 0 { parts.append(color.paint("\(progress.failed) failed", "31")) }
    parts.append(clock(now) + " elapsed")
    if let eta = progress.eta { parts.append("ETA " + clock(eta)) }
    return bar + " " + parts.joined(separator: "  ")
  }

  private func operationLine(_ op: (name: String, start: Double, progress: OperationProgress?), width: Int) -> String {
    let spin = String(Self.spinner[(frame + op.name.count) % Self.spinner.count])
    var text = "  \(color.paint(spin, "36")) \(op.name)"
    if let p = op.progress, !p.indeterminate {
      text += " " + bar(p.fraction, width: 12) + " \(Int(p.fraction * 100))%"
    }
    if let description = op.progress?.description, !description.isEmpty { text += "  " + description }
    let elapsed = now - op.start
    return text + "  " + (elapsed < 60 ? String(format: "%.1fs", elapsed) : clock(elapsed))
  }

  private func bar(_ fraction: Double, width: Int) -> String {
    let filled = Int((min(1, max(0, fraction)) * Double(width)).rounded(.down))
    return "[" + color.paint(String(repeating: "█", count: filled), "32")
      + String(repeating: "░", count: width - filled) + "]"
  }

  private func clock(_ seconds: Double) -> String {
    let s = max(0, Int(seconds))
    return s >= 3600 ? String(format: "%d:%02d:%02d", s / 3600, s / 60 % 60, s % 60) : String(format: "%d:%02d", s / 60, s % 60)
  }

  /// Cuts a line to the terminal width (escape codes take no columns), so nothing wraps.
  private func fit(_ line: String, _ width: Int) -> String {
    var out = "", columns = 0, inEscape = false
    for ch in line {
      if ch == "\u{1B}" { inEscape = true }
      if inEscape {
        out.append(ch)
        if ch.isLetter { inEscape = false }
        continue
      }
      if columns >= width - 1 { break }
      out.append(ch)
      columns += 1
    }
    return out + (color.enabled ? "\u{1B}[0m" : "")
  }

  private func write(_ text: String) {
    print(text, terminator: "")
    fflush(nil)
  }
}

extension String {
  func leftPadded(_ width: Int) -> String { String(repeating: " ", count: max(0, width - count)) + self }
}
