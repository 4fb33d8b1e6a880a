// reachable(host, port) and confirm(prompt): conditions answered off the scheduler's thread.
import FoundationEssentials
import Glibc

extension BlockCondition {
  /// Satisfied when `host:port` accepts a TCP connection within `timeout` seconds. The
  /// connect happens off the scheduler's thread.
  public static func reachable(host: String, port: Int, timeout: Double = 5) -> BlockCondition {
    BlockCondition(name: "reachable \(host):\(port)") { _, scheduler, done in
      scheduler.perform({ tcpConnect(host: host, port: port, timeout: timeout) }) { error in
        done(error.map { .failed($0) } ?? .satisfied)
      }
    }
  }
}

extension BlockCondition {
  /// Asks the user (`confirm(prompt)`): yes → satisfied, no → failed. With `assumeYes` it
  /// holds at once; without a terminal it fails clearly. Prompts are asked one at a time; a
  /// queued one whose operation was cancelled meanwhile (the run stopped) is never asked.
  public static func confirm(
    _ prompt: String, assumeYes: Bool,
    ask: (@Sendable (String) -> Bool?)?
  ) -> BlockCondition {
    BlockCondition(name: "confirm") { op, scheduler, done in
      if assumeYes { return done(.satisfied) }
      guard let ask else {
        return done(.failed("cannot ask \"\(prompt)\": not running on a terminal (--yes answers yes)"))
      }
      scheduler.oneAtATime(for: op) { finished in
        scheduler.announcer.prompt(prompt, at: scheduler.elapsed)
        scheduler.perform({ ask(prompt).map { $0 ? nil : "declined" } ?? "no answer" }) { answer in
          scheduler.announcer.prompt(nil, at: scheduler.elapsed)
          // The answer first: a "no" that stops the run cancels the operations whose
          // questions wait, before `finished()` would ask the next one.
          done(answer.map { .failed("\"\(prompt)\": \($0)") } ?? .satisfied)
          finished()
        }
      }
    }
  }
}

extension Scheduler {
  /// Runs `body` when no other `oneAtATime` body is between its start and its `finished()`
  /// (prompts wait for each other, like alerts), first come first served. A queued body
  /// whose operation has finished meanwhile (cancelled by a stop or Ctrl-C) is dropped
  /// unrun: nothing waits for its answer any more.
  public func oneAtATime(for op: OperationNode, _ body: @escaping (_ finished: @escaping () -> Void) -> Void) {
    prompts.enter(wanted: { op.state == .pending && !op.isFinished }, body)
  }
}

/// Opens and closes a TCP connection; nil on success, else why it failed.
func tcpConnect(host: String, port: Int, timeout: Double) -> String? {
  var hints = addrinfo()
  hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
  var list: UnsafeMutablePointer<addrinfo>?
  let rc = getaddrinfo(host, String(port), &hints, &list)
  guard rc == 0, let first = list else {
    return "cannot resolve '\(host)': \(String(cString: gai_strerror(rc)))"
  }
  defer { freeaddrinfo(list) }
  var reason = "cannot connect to \(host):\(port)"
  var entry: UnsafeMutablePointer<addrinfo>? = first
  while let info = entry {
    entry = info.pointee.ai_next
    let fd = socket(info.pointee.ai_family, info.pointee.ai_socktype, info.pointee.ai_protocol)
    guard fd >= 0 else { continue }
    defer { close(fd) }
    _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
    if connect(fd, info.pointee.ai_addr, info.pointee.ai_addrlen) == 0 { return nil }
    guard errno == EINPROGRESS else {
      reason = "cannot connect to \(host):\(port): \(String(cString: strerror(errno)))"
      continue
    }
    var pfd = pollfd(fd: fd, events: Int16(POLLOUT), revents: 0)
    guard poll(&pfd, 1, Int32(min(max(0, timeout), 3600) * 1000)) == 1 else {
      reason = "no answer from \(host):\(port) within \(formatSeconds(timeout))"
      continue
    }
    var error: Int32 = 0
    var length = socklen_t(MemoryLayout<Int32>.size)
    getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &length)
    if error == 0 { return nil }
    reason = "cannot connect to \(host):\(port): \(String(cString: strerror(error)))"
  }
  return reason
}
