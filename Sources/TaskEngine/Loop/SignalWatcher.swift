// SignalWatcher: Ctrl-C, SIGTERM, SIGHUP and Ctrl-Z, from taskrun's first instant to its last.
import CSpawn
import FoundationEssentials
import Glibc

/// The one place taskrun's signals arrive. The signals are blocked before `main` runs (see
/// CSpawn's signals.c); `start()` installs handlers that write each signal to a pipe and
/// unblocks them, so none arriving earlier is lost or takes its default action. A thread
/// reads the pipe and hands each signal to whatever run is attached.
///
/// - SIGINT, SIGTERM, SIGHUP: an interrupt. `immediately` runs on the watcher's thread (to
///   stop a runaway Lua loop, or to leave at once on the third), then the inbox hears it.
///   Interrupts before `attach` are kept and delivered to the first run attached.
/// - SIGTSTP (Ctrl-Z): `onSuspend` (restore the terminal), the running commands' process
///   groups stop, then taskrun stops itself. SIGCONT resumes the commands, then `onResume`.
/// - SIGCHLD is not among them: exits come from pidfds, and the process runner looks for
///   commands stopped by the terminal twice a second (ProcessRunner.swift).
public final class SignalWatcher: @unchecked Sendable {
  public static let shared = SignalWatcher()

  private let lock = Lock()
  private var started = false
  private var inbox: Inbox?
  private var processes: ProcessRunner?
  private var immediately: @Sendable (_ signal: Int32, _ count: Int) -> Void = { _, _ in }
  private var onSuspend: @Sendable () -> Void = {}
  private var onResume: @Sendable () -> Void = {}
  /// Interrupts delivered to the attached run, and those that came while none was attached.
  private var count = 0
  private var early: [Int32] = []

  /// Installs the handlers, once; call it first thing in `main`.
  public func start() {
    lock.lock()
    defer { lock.unlock() }
    guard !started else { return }
    started = true
    // A file past `ulimit -f` (an output file of --output-limit, --events, io.open) must not
    // kill taskrun with SIGXFSZ: the write fails with EFBIG and is reported. Commands get the
    // default back (CSpawn's spawn.c resets every signal below 32).
    signal(SIGXFSZ, SIG_IGN)
    var fds: [Int32] = [-1, -1]
    guard pipe(&fds) == 0 else { return }
    for fd in fds { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
    _ = fcntl(fds[1], F_SETFL, O_NONBLOCK)  // the handlers never block; the watcher does
    // A plain pthread (it inherits the blocked signals): Foundation's Thread cost start-up
    // 150k instructions of its own bookkeeping.
    let reader = Unmanaged.passRetained(Reader(watcher: self, fd: fds[0])).toOpaque()
    var thread = pthread_t()
    guard
      pthread_create(
        &thread, nil,
        { reader in
          Unmanaged<Reader>.fromOpaque(reader!).takeRetainedValue().run()
          return nil
        }, reader) == 0
    else { return }
    pthread_detach(thread)
    _ = cs_handle_signals(fds[1])
  }

  /// The watcher's thread: reads each signal from the pipe and delivers it.
  private final class Reader {
    let watcher: SignalWatcher
    let fd: Int32
    init(watcher: SignalWatcher, fd: Int32) { self.watcher = watcher; self.fd = fd }

    func run() {
      cs_name_thread("taskrun.signals")
      var byte: UInt8 = 0
      while true {
        let n = read(fd, &byte, 1)
        if n == 1 { watcher.deliver(Int32(byte)) } else if n < 0 && errno != EINTR { return }
      }
    }
  }

  /// Sends the signals to this run from now on (and the interrupts that came before).
  public func attach(
    inbox: Inbox, processes: ProcessRunner,
    immediately: @escaping @Sendable (_ signal: Int32, _ count: Int) -> Void = { _, _ in },
    onSuspend: @escaping @Sendable () -> Void = {},
    onResume: @escaping @Sendable () -> Void = {}
  ) {
    lock.lock()
    self.inbox = inbox
    self.processes = processes
    self.immediately = immediately
    self.onSuspend = onSuspend
    self.onResume = onResume
    count = 0
    let waiting = early
    early = []
    lock.unlock()
    for signal in waiting { deliver(signal) }
  }

  fileprivate func deliver(_ signal: Int32) {
    lock.lock()
    let inbox = self.inbox, processes = self.processes
    let immediately = self.immediately, onSuspend = self.onSuspend, onResume = self.onResume
    switch signal {
    case SIGINT, SIGTERM, SIGHUP:
      if inbox == nil { early.append(signal); lock.unlock(); return }
      count += 1
    default: break
    }
    let count = self.count
    lock.unlock()
    switch signal {
    case SIGINT, SIGTERM, SIGHUP:
      // The scheduler counts it before any Lua code can see the interrupt flag, so a body
      // stopped by the flag always finds the run interrupted.
      inbox?.postSignal(signal)
      immediately(signal, count)
    case SIGTSTP:
      onSuspend()
      processes?.suspendAll()
      kill(getpid(), SIGSTOP)  // returns once continued; SIGCONT then arrives here
    case SIGCONT:
      processes?.resumeAll()
      onResume()
      inbox?.post(.wake)
    default:
      break
    }
  }
}
