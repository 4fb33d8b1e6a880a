// TerminalForeground: an interactive command gets the terminal's foreground, and taskrun takes it back.
import CSpawn
import Glibc

/// What a shell does for a job, for an interactive command (`CommandSpec.usesTerminal`): its
/// process group becomes the terminal's foreground as it starts (spawn.c), so it reads the
/// terminal and Ctrl-C reaches it; taskrun takes the foreground back, with the terminal's
/// modes as they were, when it has ended, but only from the command: a taskrun put in the
/// background meanwhile (Ctrl-Z, then `bg`) leaves the terminal to its shell.
final class TerminalForeground {
  /// The terminal, the group that had its foreground (taskrun's) and its modes, as handed
  /// over; the command's own modes while Ctrl-Z stopped it. Touched under the runner's lock,
  /// or before the command is shared.
  private var state = cs_terminal()

  /// The terminal to hand an interactive command: standard input, when it is a terminal whose
  /// foreground taskrun's group has (a taskrun started in the background hands nothing over);
  /// nil otherwise (the command still gets taskrun's standard input, output and error).
  static func handed() -> TerminalForeground? {
    let terminal = TerminalForeground()
    return cs_hand_terminal(STDIN_FILENO, &terminal.state) == 0 ? terminal : nil
  }

  var fd: Int32 { state.fd }

  /// Takes the foreground back from `group` (0: a command that failed to start), if that
  /// group still has it; `keepingModes`: the command's modes are kept for `giveAgain` (Ctrl-Z).
  func takeBack(from group: pid_t, keepingModes: Bool = false) {
    _ = cs_take_terminal(&state, group, keepingModes ? 1 : 0)
  }

  /// After Ctrl-Z and `fg`: the interactive command `group` gets the foreground again, with
  /// its modes, before it is continued (not after `bg`: taskrun has no foreground to give).
  func giveAgain(to group: pid_t) { _ = cs_give_terminal(&state, group) }

  /// The command `group` that had the foreground ended with `status` (128 + a signal that
  /// killed it): taskrun takes the foreground back. Whether Ctrl-C ended it (SIGINT, which went
  /// to its group alone): then taskrun is interrupted as Ctrl-C would have, and the run stops.
  func returned(from group: pid_t, status: Int32) -> Bool {
    takeBack(from: group)
    return status == 128 + SIGINT
  }
}
