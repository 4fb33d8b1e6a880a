// ProcessRunner: spawns commands into their own process groups; the scheduler's thread polls
// every pipe and pidfd while it waits (no thread per command, no hand-off); completions go to the inbox.
import CSpawn
import FoundationEssentials
import Glibc
import Synchronization

/// Runs commands and posts what happens to an inbox: their pipes and pidfds are watched by
/// the thread that waits on that inbox (the scheduler's), as ninja's one `ppoll` loop does.
///
/// Ownership: a command's process group is signalled only while its leader is unreaped (a
/// zombie still holds the id), and reaping happens under the same lock as signalling, so an
/// id that the kernel may have given to someone else is never signalled. What a command
/// leaves behind (background children, daemons that left the group) becomes taskrun's own
/// child once orphaned (taskrun is a subreaper, see `endDescendants`).
public final class ProcessRunner: DescriptorSource, @unchecked Sendable {
  private let inbox: Inbox
  private let lock = Lock()
  /// The commands in the order they started, until each is reported (guarded by lock; a few
  /// at a time, so a signal finds its command by token in a walk), and what the scheduler's
  /// thread took of it for one wait, from `watch` to `handle`.
  private var live: [RunningCommand] = []
  @exclusivity(unchecked) private var snapshot: [RunningCommand] = []
  /// Guarded by lock: Ctrl-Z stopped the commands (their stops are not the terminal's).
  private var suspended = false
  /// When `watch` next looks for commands the terminal stopped (scheduler's thread only).
  @exclusivity(unchecked) private var nextStopCheck = 0.0
  /// Whether a command's output must be posted as text as it comes (the scheduler's answer,
  /// asked on its thread at each read; nil: always).
  @exclusivity(unchecked) var wantsText: ((CommandToken) -> Bool)?
  /// Programs found in taskrun's PATH, by name (scheduler thread only).
  @exclusivity(unchecked) private var resolved: [String: String] = [:]

  /// Seconds output is still read after a command exited (a background child may hold its
  /// pipes open for much longer: the operation ends anyway).
  public static let drainTime = 0.2
  /// What a command's streams keep in memory and on disk (the command line sets it before
  /// any command starts; read on the scheduler's thread as each one starts).
  @exclusivity(unchecked) public var outputLimits = OutputLimits()
  /// `--sandbox`: what confines every command (nil: commands are not confined). Set by the
  /// command line before any command starts.
  @exclusivity(unchecked) public var confinement: Confinement?
  /// Bytes of a stream's end kept in memory past `outputLimits.memory` (and in its file past
  /// `outputLimits.file`).
  public static let tailBytes = 64 << 10
  /// Seconds between two looks for commands the terminal stopped (SIGCHLD is not used: see
  /// CSpawn's signals.c).
  public static let stopCheckInterval = 0.5
  /// Bytes read from one pipe before the scheduler handles them: a command printing without
  /// end then waits on its writes while its output is reported, and cannot fill memory.
  public static let readLimit = 1 << 20

  /// What the last `watch` asked `poll` about, for each descriptor after the wake pipe: the
  /// index in `snapshot` of its command times 4, plus 0 for stdout, 1 for stderr, 2 for the pidfd.
  @exclusivity(unchecked) private var watched: [Int] = []
  @exclusivity(unchecked) private var buffer = [UInt8](repeating: 0, count: 65536)

  public init(inbox: Inbox) {
    self.inbox = inbox
    inbox.source = self
  }

  /// Makes this process a child subreaper: descendants orphaned by a command (background
  /// children, daemons that left its group) become its children, for `endDescendants`.
  /// For the command line only: a test process would collect other tests' orphans.
  public static func becomeSubreaper() { _ = cs_become_subreaper() }

  /// Starts `spec`; its completion arrives as `.processExited(token:…)`. A command that
  /// cannot start completes at once with status 127 and the reason on stderr.
  public func start(_ spec: CommandSpec, token: CommandToken) {
    // An interactive command's output goes straight to taskrun's own: no pipes.
    let terminal = spec.usesTerminal
    var outPipe: [Int32] = [-1, -1], errPipe: [Int32] = [-1, -1]
    guard terminal || (cs_pipe(&outPipe) == 0 && cs_pipe(&errPipe) == 0) else {
      for fd in outPipe + errPipe where fd >= 0 { close(fd) }
      return fail(token: token, "cannot create a pipe: \(String(cString: strerror(errno)))")
    }
    let (input, output, errors) = terminal ? (STDIN_FILENO, STDOUT_FILENO, STDERR_FILENO) : (-1, outPipe[1], errPipe[1])
    let foreground = terminal ? TerminalForeground.handed() : nil
    var pid: pid_t = 0, pidfd: Int32 = -1
    if let problem = launch(
      spec, stdin: input, stdout: output, stderr: errors, foreground: foreground?.fd ?? -1, pid: &pid, pidfd: &pidfd)
    {
      for fd in outPipe + errPipe where fd >= 0 { close(fd) }
      foreground?.takeBack(from: 0)
      return fail(token: token, problem)
    }
    // Without a pidfd the exit is looked for every 20 ms: the pipes' end of file wakes us sooner.
    if pidfd < 0 {
      close(outPipe[1]); close(errPipe[1])
      (outPipe[1], errPipe[1]) = (-1, -1)
    }
    let child = RunningCommand(
      pid: pid, token: token, stdout: outPipe, stderr: errPipe, pidfd: pidfd,
      limits: outputLimits)
    child.sandbox = spec.sandbox
    child.foreground = foreground
    child.interactive = terminal
    lock.lock()
    live.append(child)
    lock.unlock()
    inbox.interruptWait()  // a wait that began before it watches its descriptors from now on
  }

  /// Starts `spec` writing to `stdout` and `stderr` (a service's log: `ServiceKeeper`), in a
  /// process group of its own, confined as commands are; nil, or why it could not start.
  /// The caller owns the process: it is not one of the running commands.
  public func spawn(_ spec: CommandSpec, stdout: Int32, stderr: Int32, pid: inout pid_t, pidfd: inout Int32)
    -> String?
  {
    launch(spec, stdin: -1, stdout: stdout, stderr: stderr, foreground: -1, pid: &pid, pidfd: &pidfd)
  }

  /// Resolves the program, confines and spawns it (`stdin` -1: /dev/null; `foreground` ≥ 0:
  /// the terminal it is made the foreground of); why it could not, or nil.
  private func launch(
    _ spec: CommandSpec, stdin input: Int32, stdout: Int32, stderr: Int32, foreground: Int32, pid: inout pid_t,
    pidfd: inout Int32
  ) -> String? {
    let argv = spec.argv
    var rules: cs_confinement?
    if let confinement {
      do { rules = try confinement.rules(for: spec.sandbox) } catch {
        return "sandbox: \(error.description)"
      }
    }
    let env = confinement.map { $0.environment(adding: spec.environment) } ?? mergedEnvironment(spec.environment)
    // taskrun's own PATH, unless the command's env sets one
    let searchPath: String?? = spec.environment["PATH"].map { .some($0) }
    let program: String
    switch resolve(argv[0], in: searchPath) {
    case .success(let path): program = path
    case .failure(let error): return describe(error.code.rawValue, argv[0], spec.directory)
    }
    let qos = spec.qos
    if let qos { cs_set_spawn_qos(qos.niceDelta, qos.ioPriority) }
    if foreground >= 0 { cs_set_spawn_terminal(foreground) }
    let rc = withCStrings(argv) { cArgv in
      withOptionalCStrings(env) { cEnv in
        guard var rules else {
          return cs_spawn_input(program, cArgv, cEnv, spec.directory, input, stdout, stderr, &pid, &pidfd)
        }
        // Joining the sandbox's mount namespace leaves the old one: the folder must be whole.
        let directory = spec.directory.map { $0.hasPrefix("/") ? $0 : Self.currentDirectory() + "/" + $0 }
        return (directory ?? Self.currentDirectory()).withCString { folder in
          rules.directory = folder
          return cs_spawn_confined(program, cArgv, cEnv, nil, input, stdout, stderr, &rules, &pid, &pidfd)
        }
      }
    }
    if qos != nil { cs_set_spawn_qos(0, -1) }  // the next spawn is as taskrun's again
    if foreground >= 0 { cs_set_spawn_terminal(-1) }
    return rc == 0 ? nil : describe(rc, argv[0], spec.directory)
  }

  /// taskrun's current folder (a confined command starts from a whole path).
  public static func currentDirectory() -> String {
    var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
    return getcwd(&buffer, buffer.count).map { String(cString: $0) } ?? "/"
  }

  /// `name` found in `path` (nil: taskrun's own PATH, whose results are cached per name;
  /// Lua cannot change taskrun's environment, so the cache holds for the process).
  private func resolve(_ name: String, in path: String??) -> Result<String, POSIXError> {
    if path == nil, let known = resolved[name] { return .success(known) }
    var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
    let rc =
      path.map { cs_resolve(name, $0, &buffer, buffer.count) }
      ?? cs_resolve(name, getenv("PATH"), &buffer, buffer.count)
    guard rc == 0 else { return .failure(POSIXError(POSIXErrorCode(rawValue: rc) ?? .ENOENT)) }
    let found = buffer.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
    if path == nil && !name.contains("/") { resolved[name] = found }
    return .success(found)
  }

  private func describe(_ rc: Int32, _ program: String, _ directory: String?) -> String {
    switch rc {
    case ENOENT:
      return directory.map { dir in
        FileManager.default.fileExists(atPath: dir)
          ? "\(program): command not found"
          : "cwd '\(dir)': no such directory"
      } ?? "\(program): command not found"
    case EACCES: return "\(program): permission denied"
    default: return "\(program): cannot start: \(String(cString: strerror(rc)))"
    }
  }

  /// Sends `signal` to the process group of the command started with `token`, if its leader
  /// has not been reaped; it remembers that the command was asked to stop, so what is left
  /// of its group is killed when the leader exits.
  public func signal(token: CommandToken, _ signal: Int32) {
    self.signal(token: token, signal, group: true)
  }

  /// `group: false` signals the command's own process only (srun passes USR1 on, but its
  /// helper in the same group would die of it).
  public func signal(token: CommandToken, _ signal: Int32, group: Bool) {
    lock.lock(); defer { lock.unlock() }
    guard let child = live.first(where: { $0.token == token }), !child.reaped else { return }
    child.signalled = true
    kill(group ? -child.pid : child.pid, signal)
  }

  /// Sends `signal` to every running command's process group.
  public func signalAll(_ signal: Int32) {
    lock.lock(); defer { lock.unlock() }
    for child in live where !child.reaped {
      child.signalled = true
      kill(-child.pid, signal)
    }
  }

  /// Ctrl-Z: stops every running command's process group (SIGSTOP: a command may ignore SIGTSTP).
  func suspendAll() {
    lock.lock(); defer { lock.unlock() }
    suspended = true
    for child in live where !child.reaped { kill(-child.pid, SIGSTOP) }
  }

  /// After Ctrl-Z, `fg` or `bg`: the commands go on.
  func resumeAll() {
    lock.lock(); defer { lock.unlock() }
    guard suspended else { return }
    suspended = false
    for child in live where !child.reaped {
      child.foreground?.giveAgain(to: child.pid)
      kill(-child.pid, SIGCONT)
    }
  }

  private func fail(token: CommandToken, _ message: String) {
    inbox.post(.processOutput(token: token, stream: .stderr, text: message + "\n"))
    inbox.post(.processExited(token: token, result: CommandResult(status: 127, stdout: "", stderr: message + "\n")))
  }

  // MARK: What is left when the run ends

  /// Ends every process the run left: the running commands' groups (SIGKILL), and every
  /// child of taskrun's that is not a running command's leader: orphaned background
  /// children and daemons reparented to taskrun (a subreaper), and zombies. Each is
  /// killed by its own pid while it is still an unreaped child, so the id is ours. Killing
  /// one orphans its own children onto taskrun in turn: it repeats until none is left, at
  /// most `within` seconds. Call it only when no Lua code can be waiting for a child of its
  /// own (`os.execute`).
  public func endDescendants(within seconds: Double = 2) {
    signalAll(SIGKILL)
    let deadline = Date().addingTimeInterval(seconds)
    while killStrays(includingOwnGroup: true) > 0 && Date() < deadline { usleep(2_000) }
  }

  /// What the commands so far left behind is ended and reaped (`killStrays`, repeated until none
  /// is left, at most `within` seconds): the end of a cycle of `taskrun -w`.
  public func endStrays(within seconds: Double = 0.5) {
    let deadline = Date().addingTimeInterval(seconds)
    while killStrays() > 0 && Date() < deadline { usleep(2_000) }
  }

  /// Kills (and reaps) taskrun's children that are not running commands' leaders; with
  /// `includingOwnGroup` false, spares those in taskrun's own process group (a child
  /// `os.execute` may be waiting for) and those another thread waits for (`waitedFor`).
  /// Returns how many it found.
  @discardableResult
  public func killStrays(includingOwnGroup: Bool = false) -> Int {
    guard cs_has_children() != 0 else { return 0 }  // most runs end with none: skip /proc
    lock.lock(); defer { lock.unlock() }  // no leader is reaped meanwhile: their ids stay ours
    return Self.waitedFor.withLock { waited in  // none is spawned or spared meanwhile
      let spared = Set(live.map(\.pid)).union(includingOwnGroup ? [] : waited)
      let own = getpgrp()
      var pids = [pid_t](repeating: 0, count: 4096), groups = pids
      let count = Int(cs_children(&pids, &groups, Int32(pids.count)))
      var found = 0
      for i in 0..<max(0, count) where !spared.contains(pids[i]) && (includingOwnGroup || groups[i] != own) {
        found += 1
        kill(pids[i], SIGKILL)
        kill(pids[i], SIGCONT)
        _ = cs_reap(pids[i])
        waited.remove(pids[i])
      }
      return found
    }
  }

  /// Children that a thread of taskrun's spawned in a group of their own and waits for
  /// itself (Slurm's tools): the second Ctrl-C's sweep leaves them to it, so the `scancel`
  /// the first one started finishes. A spawner holds the lock from its spawn until the pid
  /// is in, so a sweep either sees it here or does not see the child at all; the sweep at
  /// the run's end kills them too, and takes out what it reaped.
  public static let waitedFor = Mutex<Set<pid_t>>([])

  // MARK: Watching, on the scheduler's thread

  public func watch(_ fds: inout [pollfd]) -> Double? {
    lock.lock()
    snapshot = live
    lock.unlock()
    watched.removeAll(keepingCapacity: true)
    guard !snapshot.isEmpty else { return nil }
    // What to watch: every open output pipe and every running command's pidfd; and, while a
    // command runs, the next look for commands the terminal stopped.
    let now = MonotonicClock.seconds()
    var limit: Double?
    for (index, child) in snapshot.enumerated() {
      // stdout before stderr: when both are ready their lines keep the order they were written in.
      if child.out >= 0 {
        fds.append(pollfd(fd: child.out, events: Int16(POLLIN), revents: 0))
        watched.append(index * 4)
      }
      if child.err >= 0 {
        fds.append(pollfd(fd: child.err, events: Int16(POLLIN), revents: 0))
        watched.append(index * 4 + 1)
      }
      if child.status == nil && child.pidfd >= 0 {
        fds.append(pollfd(fd: child.pidfd, events: Int16(POLLIN), revents: 0))
        watched.append(index * 4 + 2)
      }
      // Without a pidfd (very old kernels) exits are noticed by polling.
      if child.pidfd < 0 && child.status == nil { limit = min(limit ?? 0.02, 0.02) }
      if child.status == nil { limit = min(limit ?? .infinity, max(0, nextStopCheck - now)) }
      if let until = child.drainUntil { limit = min(limit ?? .infinity, max(0, until - now)) }
    }
    return limit
  }

  public func handle(_ fds: [pollfd], from first: Int) {
    guard !snapshot.isEmpty else { return }
    for i in first..<min(fds.count, first + watched.count) where fds[i].revents != 0 {
      let owner = watched[i - first]
      let child = snapshot[owner >> 2]
      if owner & 3 == 2 {
        reap(child)
      } else {
        let channel: OutputChannel = owner & 3 == 0 ? .stdout : .stderr
        // Closed since the poll (the leader's exit, seen first, drained it to the end).
        guard child[pipe: channel] == fds[i].fd else { continue }
        drain(fds[i].fd, channel: channel, child: child)
      }
      complete(child)
    }
    let now = MonotonicClock.seconds()
    if now >= nextStopCheck {
      nextStopCheck = now + Self.stopCheckInterval
      lock.lock()
      let suspended = self.suspended
      lock.unlock()
      if !suspended { stopped(snapshot) }
    }
    var ended = false
    for child in snapshot {
      if child.pidfd < 0 && child.status == nil { reap(child) }
      // Its command has exited and the drain time is over: what still holds the pipes
      // open is a background child, which does not keep the operation running.
      if let until = child.drainUntil, now >= until {
        for channel in OutputChannel.both where child[pipe: channel] >= 0 {
          drain(child[pipe: channel], channel: channel, child: child)
          if child[pipe: channel] >= 0 {
            close(child[pipe: channel])
            child[pipe: channel] = -1
            flushPartial(channel, child: child)
          }
        }
      }
      complete(child)
      ended = ended || child.ended
    }
    snapshot = []  // `live` is unshared again (a generic removeAll(keepingCapacity:) cost more)
    guard ended else { return }
    lock.lock()
    var i = 0
    while i < live.count { if live[i].ended { live.remove(at: i) } else { i += 1 } }
    lock.unlock()
  }

  /// Commands stopped by the terminal (SIGTTIN/SIGTTOU: they tried to read it, or to change
  /// its modes, from their own process group) would wait forever: end them and say why.
  private func stopped(_ snapshot: [RunningCommand]) {
    for child in snapshot where child.status == nil {
      let signal = cs_stop_signal(child.pid)
      // Ctrl-Z reached an interactive command alone (it has the foreground): taskrun takes the
      // terminal back and stops as at any Ctrl-Z; `fg` gives it back (`resumeAll`).
      if signal == SIGTSTP, let foreground = child.foreground {
        lock.lock()
        foreground.takeBack(from: child.pid, keepingModes: true)
        lock.unlock()
        kill(getpid(), SIGTSTP)
        continue
      }
      guard signal == SIGTTIN || signal == SIGTTOU else { continue }
      lock.lock()
      if !child.reaped {
        child.signalled = true
        child.reason =
          "stopped to \(signal == SIGTTIN ? "read" : "set up") the terminal "
          + "(SIG\(signal == SIGTTIN ? "TTIN" : "TTOU")), so taskrun killed it: "
          + (child.interactive
            ? "an interactive operation needs taskrun in the foreground (`fg`, not `bg` or `&`)"
            : "commands run without a terminal; give it its input another way (a file, an argument, "
              + "the environment)")
        kill(-child.pid, SIGKILL)
        kill(-child.pid, SIGCONT)
      }
      lock.unlock()
    }
  }

  /// Reads what is there (until EAGAIN, or `readLimit` bytes); on end of file closes the pipe.
  private func drain(_ fd: Int32, channel: OutputChannel, child: RunningCommand) {
    var total = 0
    while total < Self.readLimit {
      let n = read(fd, &buffer, buffer.count)
      if n > 0 {
        total += n
        received(Data(buffer[0..<n]), channel: channel, child: child)
      } else if n < 0 && errno == EINTR {
        continue
      } else {
        if n == 0 || errno != EAGAIN {
          close(fd)
          child[pipe: channel] = -1
          flushPartial(channel, child: child)
        }
        return
      }
    }
  }

  /// Notes the exit of a command's leader and reaps it, under the lock that signalling takes.
  /// A command that was asked to stop takes its whole group with it: killed while the
  /// leader's zombie still holds the id. Any other is reaped as its exit is seen.
  private func reap(_ child: RunningCommand) {
    var code: Int32 = 0
    var usage = cs_usage()
    lock.lock()
    let signalled = child.signalled
    guard cs_exited(child.pid, signalled ? 0 : 1, &code, &usage) != 0 else { lock.unlock(); return }
    if signalled {
      kill(-child.pid, SIGKILL)
      _ = cs_reap_usage(child.pid, &usage)
    }
    child.usage = usage
    child.reaped = true
    // The terminal back (under the lock: `resumeAll` may give it again meanwhile).
    let interrupted = child.foreground?.returned(from: child.pid, status: code) ?? false
    lock.unlock()
    child.status = code
    // Counted before its exit is posted: the run is interrupted before the exit is handled.
    if interrupted { inbox.postSignal(SIGINT) }
    if child.pidfd >= 0 { close(child.pidfd) }
    child.pidfd = -1
    // What the command wrote is all in the pipes now, unless something it left behind still
    // holds them: read to the end, or for the drain time.
    if child.writeOut >= 0 { close(child.writeOut) }
    if child.writeErr >= 0 { close(child.writeErr) }
    (child.writeOut, child.writeErr) = (-1, -1)
    if child.out >= 0 { drain(child.out, channel: .stdout, child: child) }
    if child.err >= 0 { drain(child.err, channel: .stderr, child: child) }
    if !child.pipesClosed { child.drainUntil = MonotonicClock.seconds() + Self.drainTime }
  }

  private func received(_ data: Data, channel: OutputChannel, child: RunningCommand) {
    let token = child.token
    (channel == .stdout ? child.stdout : child.stderr).append(data, name: "command-\(token).\(channel.rawValue)")
    if wantsText?(token) ?? true {
      child.cut(
        data, from: channel, lines: { inbox.post(.processOutput(token: token, stream: channel, text: $0)) },
        stretch: { inbox.post(.processOverwrite(token: token, text: $0)) })
    } else {
      child.cutBytes(data, from: channel) { inbox.post(.processBytes(token: token, stream: channel, bytes: $0)) }
    }
  }

  private func flushPartial(_ channel: OutputChannel, child: RunningCommand) {
    guard let rest = child.finishLines(of: channel) else { return }
    inbox.post(.processOutput(token: child.token, stream: channel, text: rest))
  }

  /// Reports a command once it has exited and its pipes are closed (at end of file, or when
  /// the drain time after its exit is over).
  private func complete(_ child: RunningCommand) {
    guard !child.ended, let status = child.status, child.pipesClosed else { return }
    child.ended = true
    let token = child.token
    lock.lock()
    let reason = child.reason
    lock.unlock()
    let out = child.stdout.finish(), err = child.stderr.finish()
    var result = CommandResult(
      status: status, stdoutBytes: out.bytes, stderrBytes: err.bytes,
      stdoutFile: out.path, stderrFile: err.path, reason: reason)
    (result.stdoutDropped, result.stderrDropped) = (out.dropped, err.dropped)
    (result.stdoutIncomplete, result.stderrIncomplete) = (out.incomplete, err.incomplete)
    (result.peakMemory, result.cpuSeconds) = (Int64(child.usage.peak_kb) * 1024, child.usage.cpu)
    if status != 0, let confinement { result.note = confinement.explain(stderr: err.bytes, grant: child.sandbox) }
    inbox.post(.processExited(token: token, result: result))
  }
}

extension OutputChannel {
  static let both: [OutputChannel] = [.stdout, .stderr]
}

/// taskrun's environment with `extra` over it, as `NAME=value` (nil when `extra` is empty:
/// the child inherits taskrun's as it is).
func mergedEnvironment(_ extra: [String: String]) -> [String]? {
  guard !extra.isEmpty else { return nil }
  var merged = ProcessInfo.processInfo.environment
  for (k, v) in extra { merged[k] = v }
  return merged.map { "\($0.key)=\($0.value)" }
}

func withCStrings<R>(_ strings: [String], _ body: ([UnsafeMutablePointer<CChar>?]) -> R) -> R {
  var pointers = strings.map { strdup($0) }
  pointers.append(nil)
  defer { pointers.forEach { free($0) } }
  return body(pointers)
}

func withOptionalCStrings<R>(
  _ strings: [String]?, _ body: (UnsafePointer<UnsafeMutablePointer<CChar>?>?) -> R
) -> R {
  guard let strings else { return body(nil) }
  return withCStrings(strings) { pointers in pointers.withUnsafeBufferPointer { body($0.baseAddress) } }
}
