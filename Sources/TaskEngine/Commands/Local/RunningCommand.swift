import CSpawn
// RunningCommand: one command the ProcessRunner started, from its spawn until it is reported.
import FoundationEssentials
import Glibc

/// One command's descriptors and what it has produced. Touched by the inbox's waiter (the
/// scheduler's thread) only, except `pid` (immutable) and the fields the runner's lock guards.
final class RunningCommand {
  let pid: pid_t
  let token: CommandToken
  /// The read ends of its stdout and stderr pipes, -1 once closed (fields, not a dictionary
  /// by channel: hashing a channel hashed its name, twice per pipe at every wake).
  var out: Int32, err: Int32
  /// taskrun's copies of the pipes' write ends, closed once the leader's exit is seen: the
  /// pipes cannot reach end of file before it, so a command's end wakes the scheduler once
  /// (by its pidfd), not once when its exit closes the pipes and again when it is reapable.
  /// -1: none (without a pidfd they are closed at once).
  var writeOut: Int32, writeErr: Int32
  var pidfd: Int32
  var stdout: OutputCapture, stderr: OutputCapture
  var outLines = OutputLines(), errLines = OutputLines()
  var status: Int32?
  /// What it used, read as it was reaped.
  var usage = cs_usage()
  var drainUntil: Double?
  /// Reported: it leaves the runner's list at the end of the wake that reported it.
  var ended = false
  /// Guarded by the runner's lock: reaped (its group id may be reused), asked to stop (its
  /// group dies with it), and why taskrun ended it on its own.
  var reaped = false
  var signalled = false
  var reason: String?
  /// What its operation asked the sandbox for, to explain a failure (`Confinement.explain`).
  var sandbox: SandboxGrant?
  /// The terminal whose foreground it was handed (an interactive command), nil: none.
  var foreground: TerminalForeground?
  /// An interactive operation's command (`CommandSpec.usesTerminal`), handed the terminal or not.
  var interactive = false

  init(pid: pid_t, token: CommandToken, stdout: [Int32], stderr: [Int32], pidfd: Int32, limits: OutputLimits) {
    self.pid = pid
    (self.stdout, self.stderr) = (OutputCapture(limits: limits), OutputCapture(limits: limits))
    self.token = token
    (out, err) = (stdout[0], stderr[0])
    (writeOut, writeErr) = (stdout[1], stderr[1])
    self.pidfd = pidfd
  }

  /// The read end of `channel`'s pipe (-1: closed).
  subscript(pipe channel: OutputChannel) -> Int32 {
    get { channel == .stdout ? out : err }
    set { if channel == .stdout { out = newValue } else { err = newValue } }
  }
  var pipesClosed: Bool { out < 0 && err < 0 }
  /// Cuts what `channel` wrote into lines (in place: a copy through a subscript cost a
  /// retain, a release and a store at every read of a pipe).
  func cut(_ data: Data, from channel: OutputChannel, lines: (String) -> Void, stretch: (String) -> Void) {
    if channel == .stdout {
      outLines.add(data, lines: lines, stretch: stretch)
    } else {
      errLines.add(data, lines: lines, stretch: stretch)
    }
  }
  /// As `cut`, for output nothing reads as it comes: whole lines as bytes, nothing decoded.
  func cutBytes(_ data: Data, from channel: OutputChannel, lines: ([UInt8]) -> Void) {
    if channel == .stdout { outLines.addBytes(data, lines: lines) } else { errLines.addBytes(data, lines: lines) }
  }
  /// `channel` ended: its unfinished line, ended, if there is one.
  func finishLines(of channel: OutputChannel) -> String? {
    channel == .stdout ? outLines.finish() : errLines.finish()
  }
}
