// ProcessRunner: posix_spawn into a process group, read pipes and reap through pidfds, all
// on one dispatch queue (one waiter, no thread per command); completions go to the inbox.
import CSpawn
import Dispatch
import Foundation

/// Runs commands off the scheduler's thread and posts what happens to an inbox.
public final class ProcessRunner: @unchecked Sendable {
  private let inbox: Inbox
  private let queue = DispatchQueue(label: "taskrun.processes")
  private let lock = NSLock()
  private var children: [Int: Child] = [:]  // by token
  private var groups: Set<pid_t> = []        // every process group ever started

  private final class Child {
    let pid: pid_t
    var sources: [DispatchSourceRead] = []
    var stdout = Data(), stderr = Data()
    var partial: [OutputChannel: Data] = [:]
    var status: Int32?
    var openPipes = 2
    init(pid: pid_t) { self.pid = pid }
  }

  public init(inbox: Inbox) { self.inbox = inbox }

  /// Number of commands started and not yet reported finished.
  public var running: Int {
    lock.lock(); defer { lock.unlock() }
    return children.count
  }

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
    lock.lock()
    let rc = withCStrings(argv) { cArgv in
      withOptionalCStrings(env) { cEnv in
        cs_spawn(cArgv, cEnv, spec.directory, outPipe[1], errPipe[1], &pid)
      }
    }
    close(outPipe[1]); close(errPipe[1])
    if rc != 0 {
      lock.unlock()
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
    let child = Child(pid: pid)
    children[token] = child
    groups.insert(pid)
    lock.unlock()

    watch(fd: outPipe[0], channel: .stdout, child: child, token: token)
    watch(fd: errPipe[0], channel: .stderr, child: child, token: token)
    let pidfd = cs_pidfd_open(pid)
    let exitSource = DispatchSource.makeReadSource(fileDescriptor: pidfd, queue: queue)
    exitSource.setEventHandler { [weak self] in
      var status: Int32 = 0
      guard waitpid(pid, &status, WNOHANG) == pid else { return }
      exitSource.cancel()
      self?.exited(token: token, status: cs_exit_code(status))
    }
    exitSource.setCancelHandler { close(pidfd) }
    exitSource.resume()
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

  private func watch(fd: Int32, channel: OutputChannel, child: Child, token: Int) {
    let source = DispatchSource.makeReadSource(fileDescriptor: fd, queue: queue)
    var buffer = [UInt8](repeating: 0, count: 65536)
    source.setEventHandler { [weak self] in
      // Drain until EAGAIN: data and end of file may arrive as a single event.
      while true {
        let n = read(fd, &buffer, buffer.count)
        if n > 0 {
          self?.received(Data(buffer[0..<n]), channel: channel, child: child, token: token)
        } else if n < 0 && errno == EINTR {
          continue
        } else {
          if n == 0 || errno != EAGAIN { source.cancel() }
          return
        }
      }
    }
    source.setCancelHandler { [weak self] in
      close(fd)
      self?.pipeClosed(channel: channel, child: child, token: token)
    }
    child.sources.append(source)
    source.resume()
  }

  // The handlers below run on `queue` only.

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

  private func pipeClosed(channel: OutputChannel, child: Child, token: Int) {
    if let rest = child.partial[channel], !rest.isEmpty {
      inbox.post(.processOutput(token: token, stream: channel, text: String(decoding: rest, as: UTF8.self) + "\n"))
      child.partial[channel] = nil
    }
    child.openPipes -= 1
    complete(child: child, token: token)
  }

  private func exited(token: Int, status: Int32) {
    lock.lock()
    let child = children[token]
    child?.status = status
    lock.unlock()
    if let child { complete(child: child, token: token) }
  }

  /// Reports a command once it has exited and both pipes reached end of file. A background
  /// grandchild holding a pipe open keeps it running: its group is killed at exit as well.
  private func complete(child: Child, token: Int) {
    guard let status = child.status, child.openPipes == 0 else { return }
    lock.lock()
    children[token] = nil
    lock.unlock()
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
