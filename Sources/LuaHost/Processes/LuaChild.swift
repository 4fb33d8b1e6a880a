// LuaChild: an io.popen command while its handle is open, and the outputs taskrun reads from it.
import CLua
import CLuaShim
import Dispatch
import Glibc
import TaskEngine

/// A command Lua started with io.popen, until its handle is closed. It leads a process group
/// of its own and is reaped only when its handle closes, so its group is never signalled
/// after its pid could have been reused.
final class LuaChild: @unchecked Sendable {
  let pid: pid_t
  let pidfd: Int32
  /// Its other output (stderr; a "w" command's stdout) read for the live view.
  let sides: [SideOutput]
  /// The coroutine that opened it, while it lives: whether its close stops the command is
  /// that code's stop (Ctrl-C, cancelled, timed out), not the stop of whatever code runs
  /// when the garbage collector closes the handle (a shielded one would wait it out).
  weak var owner: LuaCoroutine?
  /// Guards reaping against signalling from another thread (the body's deadline).
  private let lock = Lock()
  private var reaped = false

  init(pid: pid_t, pidfd: Int32, sides: [SideOutput]) {
    self.pid = pid
    self.pidfd = pidfd
    self.sides = sides
  }

  /// Signals its process group, unless it has been reaped (its ids could be reused).
  func signal(_ signal: Int32) {
    lock.lock()
    defer { lock.unlock() }
    if !reaped { kill(-pid, signal) }
  }

  /// waitpid(WNOHANG) under the lock: the pid if it has exited (and is now reaped).
  func reap(_ status: inout Int32) -> pid_t {
    lock.lock()
    defer { lock.unlock() }
    let reaped = waitpid(pid, &status, WNOHANG)
    if reaped == pid || (reaped < 0 && errno == ECHILD) { self.reaped = true }
    return reaped
  }

  /// A body that reads its pipe cannot look at its deadline: at the deadline the command
  /// gets SIGTERM (then SIGKILL after `grace`), its pipe ends, and the body ends `timed out`
  /// (`tl_stop_due` when it returns, or the hook). Never before the deadline on taskrun's
  /// clock, so the body that sees the pipe's end also sees the deadline passed.
  func end(atDeadline deadline: Double, grace: Double) {
    let left = max(0, deadline - tl_monotonic())
    DispatchQueue.global().asyncAfter(deadline: .now() + left) { [self] in
      while case let early = deadline - tl_monotonic(), early > 0 { usleep(useconds_t(early * 1e6) + 1) }
      signal(SIGTERM)
    }
    DispatchQueue.global().asyncAfter(deadline: .now() + left + grace) { [self] in signal(SIGKILL) }
  }
}

/// The io.popen commands whose handles are open, by the id their handle carries.
struct LuaChildren {
  private var open: [Int: LuaChild] = [:]
  private var last = 0

  mutating func add(_ child: LuaChild) -> Int {
    last += 1
    open[last] = child
    return last
  }

  mutating func remove(_ id: Int) -> LuaChild? { open.removeValue(forKey: id) }

  /// The commands still open that `co` opened.
  func opened(by co: LuaCoroutine) -> [LuaChild] { open.values.filter { $0.owner === co } }
}

/// What a worker thread reads from one output of an io.popen command while the live view
/// draws: everything until its end, shown by the scheduler's thread when the handle closes.
final class SideOutput: @unchecked Sendable {
  let fd: Int32
  /// 0: standard output, 1: standard error.
  let stream: Int
  private let lock = Lock()
  private var bytes: [UInt8] = []
  /// Bytes past `limit` since the last `take`, dropped (a chatty command, or a background
  /// job holding the pipe after its handle closed, must not grow taskrun's memory).
  private var dropped = 0
  private var ended = false
  static let limit = 1 << 16

  init(fd: Int32, stream: Int) {
    self.fd = fd
    self.stream = stream
  }

  /// The worker: reads until the end (every writer closed it), then closes it.
  func readToEnd() {
    var buffer = [UInt8](repeating: 0, count: 65536)
    while true {
      let n = read(fd, &buffer, buffer.count)
      if n < 0 && errno == EINTR { continue }
      if n <= 0 { break }
      lock.lock()
      let room = max(0, Self.limit - bytes.count)
      bytes += buffer[0..<min(n, room)]
      dropped += n - min(n, room)
      lock.unlock()
    }
    close(fd)
    lock.lock()
    ended = true
    lock.unlock()
  }

  /// Whether the worker has read its end (every writer closed it).
  var hasEnded: Bool {
    lock.lock()
    defer { lock.unlock() }
    return ended
  }

  /// What was read and not yet taken (at most `limit` bytes, then a line saying how many
  /// were dropped), and whether the output has ended.
  func take() -> (bytes: [UInt8], ended: Bool) {
    lock.lock()
    defer { lock.unlock() }
    var taken = bytes
    if dropped > 0 {
      if taken.last != 10 && !taken.isEmpty { taken.append(10) }
      taken += Array(
        "taskrun: \(dropped) more bytes of this io.popen command's \(stream == 0 ? "output" : "standard error") not shown\n"
          .utf8)
    }
    bytes = []
    dropped = 0
    return (taken, ended)
  }
}
