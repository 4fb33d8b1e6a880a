// TaskbarProgress: the run's progress in the terminal's tab or taskbar (OSC 9;4), where supported.
import FoundationEssentials
import TaskEngine

/// Writes `ESC ] 9 ; 4 ; state ; percent BEL` when the shown state changes: 1 normal, 2 error
/// (something failed), 3 indeterminate (nothing measured yet), 4 paused (stopping); 0 clears.
/// Windows Terminal, WezTerm, kitty, Ghostty, Konsole and ConEmu show it; elsewhere it is off
/// (a terminal that does not know it could print it), as inside tmux or screen.
/// TASKRUN_TASKBAR_PROGRESS=1 or 0 forces it on or off.
final class TaskbarProgress {
  private var shown: (state: Int, percent: Int)?
  private let write: (String) -> Void

  init(write: @escaping (String) -> Void = { print($0, terminator: "") }) {  // flushed with the frame
    self.write = write
  }

  /// The reporter for this process's terminal, or nil where it is off.
  static func forTerminal(_ environment: (String) -> String? = Environment.variable) -> TaskbarProgress? {
    supported(environment) ? TaskbarProgress() : nil
  }

  static func supported(_ environment: (String) -> String?) -> Bool {
    if let forced = environment("TASKRUN_TASKBAR_PROGRESS"), !forced.isEmpty { return forced != "0" }
    if environment("TMUX") != nil || environment("STY") != nil { return false }
    if let term = environment("TERM"), term.hasPrefix("screen") || term.hasPrefix("tmux") { return false }
    if environment("WT_SESSION") != nil || environment("KITTY_WINDOW_ID") != nil
      || environment("KONSOLE_VERSION") != nil || environment("ConEmuPID") != nil
      || environment("TERM") == "xterm-kitty" || environment("TERM") == "xterm-ghostty"
    {
      return true
    }
    return ["WezTerm", "ghostty"].contains(environment("TERM_PROGRAM") ?? "")
  }

  func show(_ progress: RunProgress) {
    let percent = Int(progress.fraction * 100)
    let state = progress.stopping ? 4 : progress.failed > 0 ? 2 : percent == 0 && progress.done == 0 ? 3 : 1
    guard shown.map({ $0 != (state, percent) }) ?? true else { return }
    shown = (state, percent)
    write("\u{1B}]9;4;\(state);\(percent)\u{07}")
  }

  func clear() {
    guard shown != nil else { return }
    shown = nil
    write("\u{1B}]9;4;0;0\u{07}")
  }
}
