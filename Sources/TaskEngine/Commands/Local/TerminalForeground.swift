// TerminalForeground: an interactive command gets the terminal's foreground, and taskrun takes it back.
import CSpawn
import Glibc

/// What a shell does for a job, for an interactive command (`CommandSpec.usesTerminal`): its
/// process group becomes the terminal's foreground as it starts (spawn.c), so it reads the
/// terminal and Ctrl-C reaches it; taskrun takes the foreground back when it has ended.
enum TerminalForeground {
  /// The terminal to hand an interactive command: standard input, when it is a terminal whose
  /// foreground taskrun's group has (a taskrun started in the background hands nothing over);
  /// -1 otherwise (the command still gets taskrun's standard input, output and error).
  static func handed() -> Int32 {
    guard isatty(STDIN_FILENO) != 0, tcgetpgrp(STDIN_FILENO) == getpgrp() else { return -1 }
    return STDIN_FILENO
  }

  static func takeBack(_ fd: Int32) { _ = cs_take_terminal(fd) }

  /// After Ctrl-Z and `fg`: the interactive command `group` gets the foreground again before
  /// it is continued (not after `bg`: taskrun has no foreground to give).
  static func giveAgain(_ fd: Int32, to group: pid_t) { _ = cs_give_terminal(fd, group) }

  /// The command that had `fd`'s foreground ended with `status` (128 + a signal that killed
  /// it): taskrun takes the foreground back. Whether Ctrl-C ended it (SIGINT, which went to
  /// its group alone): then taskrun is interrupted as Ctrl-C would have, and the run stops.
  static func returned(from fd: Int32, status: Int32) -> Bool {
    takeBack(fd)
    return status == 128 + SIGINT
  }
}
