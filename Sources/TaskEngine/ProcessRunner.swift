// ProcessRunner: posix_spawn into a process group; one I/O thread polls every pipe and pidfd
// (one waiter, no thread or waitUntilExit per command); completions go to the inbox.
import CSpawn
import Foundation

/// Runs commands off the scheduler's thread and posts what happens to an inbox.
public final class ProcessRunner: @unchecked Sendable {
  private let inbox: Inbox
  private let lock = NSLock()
  private var children: [Int: Child] = [:]  // by token; guarded by lock
  private var groups: Set<pid_t> = []        // every process group ever started
  private var wake: [Int32] = [-1, -1]       // a pipe that interrupts poll when children change
  private var thread: Thread?

  /// One command's descriptors and what it has produced. Touched by the I/O thread only,
  /// except `pid` (immutable) and creation.
  private final class Child {
    let pid: pid_t
    var pipes: [OutputChannel: Int32]
    var pidfd: Int32
    var stdout = Data(), stderr = Data()
    var partial: [OutputChannel: Data] = [:]
    var status: Int32?
    init(pid: pid_t, stdout: Int32, stderr: Int32, pidfd: Int32) {
      self.pid = pid
      self.pipes = [.stdout: stdout, .stderr: stderr]
      self.pidfd = pidfd
    }
  }

  public init(inbox: Inbox) { self.inbox = inbox }

  /// Starts `spec`; its completion arrives as `.processExited(token:…)`. A command that
  /// cannot start completes at once with status 127 and the reason on stderr.
  public func start(_ spec: CommandSpec, token: Int) {
    let argv = spec.argv
    var outPipe: [Int32] = [0, 0], errPipe: [Int32] = [0, 0]
    guard cs_pipe(&outPipe) == 0, cs_pipe(&errPipe) == 0 else {
      return fail(token: token, "cannot create a pipe: \(String(cString: strerror(errno)))")
    }
    var env: [String]? = nil
    if !spec.environment.isEmpty {
      var merged = ProcessInfo.processInfo.environment
      for (k, v) in spec.environment { merged[k] = v }
      env = merged.map { "\($0.key)=\($0.value)" }
    }
    var pid: pid_t = 0
    let rc = withCStrings(argv) { cArgv in
      withOptionalCStrings(env) { cEnv in
        cs_spawn(cArgv, cEnv, spec.directory, outPipe[1], errPipe[1], &pid)
      }
    }
    close(outPipe[1]); close(errPipe[1])
    if rc != 0 {
      close(outPipe[0]); close(errPipe[0])
      let reason: String
      switch rc {
      case ENOENT:
        reason = spec.directory.map { dir in
          FileManager.default.fileExists(atPath: dir) ? "\(argv[0]): command not found"
            : "cwd '\(dir)': no such directory" } ?? "\(argv[0]): command not found"
      case EACCES: reason = "\(argv[0]): permission denied"
      default: reason = "\(argv[0]): cannot start: \(String(cString: strerror(rc)))"
      }
      return fail(token: token, reason)
    }
    let child = Child(pid: pid, stdout: outPipe[0], stderr: errPipe[0], pidfd: cs_pidfd_open(pid))
    lock.lock()
    children[token] = child
    groups.insert(pid)
    startThreadIfNeeded()
    lock.unlock()
    poke()
  }

  /// Sends `signal` to the whole process group of the command started with `token`.
  public func signal(token: Int, _ signal: Int32) {
    lock.lock(); defer { lock.unlock() }
    if let child = children[token] { kill(-child.pid, signal) }
  }

  /// Sends `signal` to every running command's process group.
  public func signalAll(_ signal: Int32) {
    lock.lock(); defer { lock.unlock() }
    for child in children.values { kill(-child.pid, signal) }
  }

  /// SIGKILL to every process group this runner ever started, so that no background
  /// grandchild outlives taskrun.
  public func killAllGroups() {
    lock.lock(); defer { lock.unlock() }
    for group in groups { kill(-group, SIGKILL) }
    groups.removeAll()
  }

  private func fail(token: Int, _ message: String) {
    inbox.post(.processOutput(token: token, stream: .stderr, text: message + "\n"))
    inbox.post(.processExited(token: token, status: 127, stdout: "", stderr: message + "\n"))
  }

  // MARK: The I/O thread

  /// Called with the lock held.
  private func startThreadIfNeeded() {
    guard thread == nil else { return }
    _ = cs_pipe(&wake)
    let thread = Thread { [self] in ioLoop() }
    thread.name = "taskrun.processes"
    self.thread = thread
    thread.start()
  }

  private func poke() {
    var byte: UInt8 = 1
    _ = write(wake[1], &byte, 1)
  }

  private func ioLoop() {
    var buffer = [UInt8](repeating: 0, count: 65536)
    while true {
      lock.lock()
      let snapshot = children
      lock.unlock()
      // What to watch: the wake pipe, every open output pipe, every unreaped pidfd.
      var fds = [pollfd(fd: wake[0], events: Int16(POLLIN), revents: 0)]
      var owners: [(token: Int, child: Child, channel: OutputChannel?)] = []  // of fds[1...]
      for (token, child) in snapshot {
        // stdout before stderr: when both are ready their lines keep the order they were written in.
        for channel in [OutputChannel.stdout, .stderr] {
          guard let fd = child.pipes[channel] else { continue }
          fds.append(pollfd(fd: fd, events: Int16(POLLIN), revents: 0))
          owners.append((token, child, channel))
        }
        if child.status == nil && child.pidfd >= 0 {
          fds.append(pollfd(fd: child.pidfd, events: Int16(POLLIN), revents: 0))
          owners.append((token, child, nil))
        }
      }
      let unwatchedExit = snapshot.values.contains { $0.pidfd < 0 && $0.status == nil }
      let ready = poll(&fds, nfds_t(fds.count), unwatchedExit ? 20 : -1)
      if ready < 0 && errno != EINTR { continue }
      if fds[0].revents != 0 { _ = read(wake[0], &buffer, buffer.count) }
      for (i, entry) in fds.enumerated().dropFirst() where entry.revents != 0 {
        let owner = owners[i - 1]
        if let channel = owner.channel {
          drain(entry.fd, channel: channel, child: owner.child, token: owner.token, buffer: &buffer)
        } else {
          reap(owner.child)
        }
        complete(owner.child, token: owner.token)
      }
      // Without a pidfd (very old kernels) exits are noticed by polling waitpid.
      for (token, child) in snapshot where child.pidfd < 0 && child.status == nil {
        reap(child)
        complete(child, token: token)
      }
    }
  }

  /// Reads what is there (until EAGAIN); on end of file closes the pipe.
  private func drain(_ fd: Int32, channel: OutputChannel, child: Child, token: Int, buffer: inout [UInt8]) {
    while true {
      let n = read(fd, &buffer, buffer.count)
      if n > 0 {
        received(Data(buffer[0..<n]), channel: channel, child: child, token: token)
      } else if n < 0 && errno == EINTR {
        continue
      } else {
        if n == 0 || errno != EAGAIN {
          close(fd)
          child.pipes[channel] = nil
          flushPartial(channel, child: child, token: token)
        }
        return
      }
    }
  }

  private func reap(_ child: Child) {
    var status: Int32 = 0
    guard waitpid(child.pid, &status, WNOHANG) == child.pid else { return }
    child.status = cs_exit_code(status)
    if child.pidfd >= 0 { close(child.pidfd) }
    child.pidfd = -1
  }

  private func received(_ data: Data, channel: OutputChannel, child: Child, token: Int) {
    if channel == .stdout { child.stdout.append(data) } else { child.stderr.append(data) }
    var pending = (child.partial[channel] ?? Data()) + data
    // Post whole lines only, so that reporters never interleave output mid-line.
    if let lastNewline = pending.lastIndex(of: 10) {
      let lines = pending[pending.startIndex...lastNewline]
      pending = Data(pending[pending.index(after: lastNewline)...])
      inbox.post(.processOutput(token: token, stream: channel, text: String(decoding: lines, as: UTF8.self)))
    }
    child.partial[channel] = pending
  }

  private func flushPartial(_ channel: OutputChannel, child: Child, token: Int) {
    if let rest = child.partial[channel], !rest.isEmpty {
      inbox.post(.processOutput(token: token, stream: channel, text: String(decoding: rest, as: UTF8.self) + "\n"))
    }
    child.partial[channel] = nil
  }

  /// Reports a command once it has exited and both pipes reached end of file. A background
  /// grandchild holding a pipe open keeps it running: its group is killed at exit as well.
  private func complete(_ child: Child, token: Int) {
    guard let status = child.status, child.pipes.isEmpty else { return }
    lock.lock()
    let known = children.removeValue(forKey: token) != nil
    lock.unlock()
    guard known else { return }
    inbox.post(.processExited(
      token: token, status: status,
      stdout: String(decoding: child.stdout, as: UTF8.self),
      stderr: String(decoding: child.stderr, as: UTF8.self)))
  }
}

private func withCStrings<R>(_ strings: [String], _ body: ([UnsafeMutablePointer<CChar>?]) -> R) -> R {
  var pointers = strings.map { strdup($0) }
  pointers.append(nil)
  defer { pointers.forEach { free($0) } }
  return body(pointers)
}

private func withOptionalCStrings<R>(
  _ strings: [String]?, _ body: (UnsafePointer<UnsafeMutablePointer<CChar>?>?) -> R
) -> R {
  guard let strings else { return body(nil) }
  return withCStrings(strings) { pointers in pointers.withUnsafeBufferPointer { body($0.baseAddress) } }
}
