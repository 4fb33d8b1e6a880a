// LiveRegion: the lines of the live view at one moment, cut to the terminal's width and height.
import TaskEngine

struct LiveRegion {
  let color: ColorPolicy
  let frame: Int
  let now: Double
  /// `-w`'s cycle, first on the overall line.
  var heading: String? = nil

  /// The overall line, the activities, and a row per running operation; when they do not
  /// fit in `height` lines, as many rows as fit and "… and N more running".
  func lines(
    progress: RunProgress, activities: [(label: String, count: Int)], running: [LiveReporter.Row],
    height: Int, width: Int
  ) -> [String] {
    var region = [overall(progress, width: width)]
    for activity in activities.prefix(max(0, height - 2)) {
      region.append("  \(color.paint(spin(activity.label), "35")) \(activity.label) (\(activity.count))")
    }
    let room = max(1, height - region.count)
    if running.count <= room {
      region += running.map { row($0, width: width) }
    } else {
      region += running.prefix(room - 1).map { row($0, width: width) }
      region.append("  … and \(running.count - (room - 1)) more running")
    }
    return region.map { $0.fitted(to: width - 1) + (color.enabled ? "\u{1B}[0m" : "") }
  }

  /// "[████░░] 40%  3 done  2 running  1 pending  0:05 elapsed  ETA 0:07", or after Ctrl-C
  /// "[████░░] 40%  stopping…  3 done  2 cancelled  1 running  0:05 elapsed"; the bar
  /// narrows (down to 6) before the words are cut.
  func overall(_ progress: RunProgress, width: Int) -> String {
    let words = ProgressLanguage.current
    var parts = ["\(Int(progress.fraction * 100))%".leftPadded(4)]
    if let heading { parts.insert(color.paint(heading, "1;36"), at: 0) }
    if progress.stopping { parts.append(color.paint(words.status(.stopping), "1;33")) }
    parts.append(words.status(.done, progress.done))
    let failed = progress.failed - progress.cancelled
    if failed > 0 { parts.append(color.paint(words.status(.failed, failed), "31")) }
    if progress.cancelled > 0 { parts.append(color.paint(words.status(.cancelled, progress.cancelled), "33")) }
    parts.append(words.status(.running, progress.running))
    if !progress.stopping { parts.append(words.status(.pending, progress.pending)) }
    parts.append(clock(now) + " " + words.status(.elapsed))
    if !progress.stopping, let eta = progress.eta { parts.append(words.status(.eta) + " " + clock(eta)) }
    let line = parts.joined(separator: "  ")
    return bar(progress.fraction, width: max(6, min(24, width - 4 - line.columns))) + " " + line
  }

  /// "  ⠋ name [████░░░░] 40%  Downloading — 2 of 5 files  1.2s": the name cut (by display
  /// width) to leave room for the rest; "paused" when its progress is.
  func row(_ op: LiveReporter.Row, width: Int) -> String {
    var tail = ""
    if let remote = op.remote, remote.queued {  // waiting in the cluster's queue: no spinner
      let reason = remote.reason.map { " (\(TerminalText.escaped($0)))" } ?? ""  // squeue's words
      return "  ⧗ " + op.name.fitted(to: max(8, width / 2), ellipsis: true)
        + "  " + color.paint("queued on \(remote.executor)\(reason)", "33")
    }
    if let p = op.progress {
      if !p.indeterminate { tail += " " + bar(p.fraction, width: 12) + " \(Int(p.fraction * 100))%" }
      let language = ProgressLanguage.current
      let words = [p.description, p.additionalDescription].filter { !$0.isEmpty && !language.isPercentCompleted($0) }
      if !words.isEmpty { tail += "  " + TerminalText.escaped(words.joined(separator: " — ")) }
      if p.paused && !p.wordsSayPaused { tail += "  " + color.paint(language.status(.paused), "33") }
    }
    let elapsed = now - op.start
    tail += "  " + (elapsed < 60 ? formatFixed(elapsed, 1) + "s" : clock(elapsed))
    if let usual = op.usual, elapsed > usual, elapsed > 1 {  // the run store's history says it is late
      tail +=
        "  " + color.paint("slower than usual (p90 \(usual < 60 ? formatFixed(usual, 1) + "s" : clock(usual)))", "33")
    }
    let room = max(8, min(width / 2, width - 6 - tail.columns))
    let mark = op.progress?.paused == true ? "‖" : spin(op.name)  // a paused row does not spin
    return "  \(color.paint(mark, "36")) " + op.name.fitted(to: room, ellipsis: true) + tail
  }

  private func spin(_ key: String) -> String {
    String(LiveReporter.spinner[(frame + key.count) % LiveReporter.spinner.count])
  }

  private func bar(_ fraction: Double, width: Int) -> String {
    let filled = Int((min(1, max(0, fraction)) * Double(width)).rounded(.down))
    return "[" + color.paint(String(repeating: "█", count: filled), "32")
      + String(repeating: "░", count: width - filled) + "]"
  }

  private func clock(_ seconds: Double) -> String {
    let s = max(0, Int(seconds))
    func two(_ n: Int) -> String { n < 10 ? "0\(n)" : "\(n)" }
    return s >= 3600 ? "\(s / 3600):\(two(s / 60 % 60)):\(two(s % 60))" : "\(s / 60):\(two(s % 60))"
  }
}

extension String {
  func leftPadded(_ width: Int) -> String { String(repeating: " ", count: max(0, width - count)) + self }
}
