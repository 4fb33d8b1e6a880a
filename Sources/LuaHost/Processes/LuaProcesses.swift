// LuaProcesses: os.execute and io.popen start their commands as taskrun starts its own.
import CLua
import CLuaShim
import CSpawn
import Dispatch
import FoundationEssentials
import Glibc
import TaskEngine

extension ScriptHost {
  /// Lets `wakeLuaThread` wake the calling thread (the one that runs Lua) from a blocking
  /// system call. Call on that thread.
  public static func prepareWakeup() { _ = cs_prepare_lua_wakeup() }

  /// From any thread: a blocking call of the Lua thread (io.read on a terminal, a read of an
  /// io.popen pipe) fails with EINTR, so Lua code runs on and the hook can raise.
  public static func wakeLuaThread() { cs_wake_lua_thread() }

  /// Replaces `os.execute` and `io.popen`. C's `system()` ignores SIGINT in taskrun while the
  /// command runs (Ctrl-C was lost) and both let the command share taskrun's terminal group;
  /// here the command is `/bin/sh -c CMD` in a process group of its own with stdin from
  /// /dev/null, as `sh`'s commands are, and the wait stops it when the code that waits is
  /// stopped (Ctrl-C, cancellation, timeout). While the live view draws, what the command
  /// writes to the terminal comes through taskrun and lands above the view. Lua's results are
  /// kept: `true|nil, "exit"|"signal", n`; io.popen's handle is a Lua file whose close
  /// returns the same.
  func installProcessFunctions() {
    let s = stack
    tl_set_child_waiter { L, child in
      guard let L, let raw = tl_extraspace(L).pointee else { return 0 }
      return Unmanaged<ScriptHost>.fromOpaque(raw).takeUnretainedValue().closeChild(Int(child))
    }
    tl_set_pipe_waiting { L in
      guard let L, let raw = tl_extraspace(L).pointee else { return 0 }
      return Unmanaged<ScriptHost>.fromOpaque(raw).takeUnretainedValue().pipeReadWaits()
    }
    lua_rawgeti(L, tl_registryindex(), lua_Integer(LUA_RIDX_GLOBALS))
    if s.rawGet(-1, "os") == LUA_TTABLE {
      pushFunction { host, s in
        if s.isNil(1) { s.push(true); return 1 }  // a shell is there
        guard let command = s.stringOrNumber(1) else { throw s.badArgument(1, "os.execute", "string") }
        return try host.execute(command, on: s)
      }
      s.rawSet(-2, "execute")
    }
    s.pop()
    if s.rawGet(-1, "io") == LUA_TTABLE {
      pushFunction { host, s in
        guard let command = s.stringOrNumber(1) else { throw s.badArgument(1, "io.popen", "string") }
        let mode = s.isNil(2) ? "r" : s.stringOrNumber(2)
        guard let mode else { throw s.badArgument(2, "io.popen", "string") }
        guard mode == "r" || mode == "w" else { throw ScriptError.badArgument(2, to: "io.popen", "invalid mode") }
        return host.popen(command, mode: mode, on: s)
      }
      s.rawSet(-2, "popen")
    }
    s.pop(2)
  }

  /// os.execute(command): runs it and waits.
  private func execute(_ command: String, on s: LuaStack) throws -> Int32 {
    if !captureWrites { fflush(nil) }  // what Lua wrote before comes first (captured: it already has)
    var streams: [(fd: Int32, stream: Int)] = []
    var ends: [Int32] = []
    var output = STDOUT_FILENO, error = STDERR_FILENO
    for (stream, captured) in capturedStreams().enumerated() where captured {
      guard let fds = makePipe(blocking: false) else { continue }
      streams.append((fds[0], stream))
      ends.append(fds[1])
      if stream == 0 { output = fds[1] } else { error = fds[1] }
    }
    let started = spawnShell(command, input: -1, output: output, error: error)
    for fd in ends { Glibc.close(fd) }
    defer { for (fd, _) in streams { Glibc.close(fd) } }
    switch started {
    case .failure(let error):
      return pushFailure(error.code, "/bin/sh", on: s)
    case .success(let (pid, pidfd)):
      let (status, stopped) = waitForChild(pid: pid, pidfd: pidfd, streams: streams)
      // Stopped: raised here as the hook would (it may not look again before the code ends).
      if let stopped {
        current?.control.pointee.raised = stopped.hook
        throw ScriptError(stopped.reason)
      }
      return pushExecResult(status, on: s)
    }
  }

  /// Starts `/bin/sh -c command` as os.execute and io.popen do, its stdin `input` (-1:
  /// /dev/null), its stdout `output` (-1: the terminal, or read for the live view while writes
  /// are captured), its stderr read for the live view while that is the terminal.
  func startChild(_ command: String, input: Int32, output given: Int32 = -1) -> Result<LuaChild, CodeError> {
    var sides: [SideOutput] = []
    var ends: [Int32] = []
    var output = STDOUT_FILENO, error = STDERR_FILENO
    for (stream, captured) in capturedStreams().enumerated() where captured && !(given >= 0 && stream == 0) {
      guard let fds = makePipe(blocking: true) else { continue }
      sides.append(SideOutput(fd: fds[0], stream: stream))
      ends.append(fds[1])
      if stream == 0 { output = fds[1] } else { error = fds[1] }
    }
    if given >= 0 { output = given }
    let started = spawnShell(command, input: input, output: output, error: error)
    for fd in ends { Glibc.close(fd) }
    switch started {
    case .failure(let code):
      for side in sides { Glibc.close(side.fd) }
      return .failure(code)
    case .success(let (pid, pidfd)):
      return .success(LuaChild(pid: pid, pidfd: pidfd, sides: sides))
    }
  }

  /// io.popen(command, mode): a file reading the command's stdout ("r") or writing its stdin
  /// ("w").
  private func popen(_ command: String, mode: String, on s: LuaStack) -> Int32 {
    if !captureWrites { fflush(nil) }  // as Lua's popen; a live view flushes its own frames
    guard let data = makePipe(blocking: true) else { return pushFailure(errno, command, on: s) }
    let (ours, theirs) = mode == "r" ? (data[0], data[1]) : (data[1], data[0])
    // The stream Lua reads is its own; the others reach the terminal through taskrun.
    let started = startChild(command, input: mode == "w" ? theirs : -1, output: mode == "r" ? theirs : -1)
    Glibc.close(theirs)
    let child: LuaChild
    switch started {
    case .failure(let error):
      Glibc.close(ours)
      return pushFailure(error.code, command, on: s)
    case .success(let started):
      child = started
    }
    child.owner = current
    let id = luaChildren.add(child)
    if let deadline = current?.control.pointee.deadline, deadline > 0 {
      child.end(atDeadline: deadline, grace: scheduler.killGrace)
    }
    // Drained off this thread (the command never waits on a full pipe), shown when its
    // handle closes (close, io.close, garbage collection, the end of the run).
    for side in child.sides { DispatchQueue.global().async { side.readToEnd() } }
    guard tl_push_child_file(s.L, ours, mode, Int32(id)) == 1 else {
      let code = errno
      Glibc.close(ours)
      _ = closeChild(id)
      return pushFailure(code, command, on: s)
    }
    return 1
  }

  /// A read of an io.popen pipe has waited 1/15 s more: it blocks the thread that runs Lua
  /// and the scheduler (no operation starts meanwhile), so the live view is drawn from here
  /// (or what Lua printed is flushed), and 1 says a stop is due: the read fails with EINTR.
  func pipeReadWaits() -> Int32 {
    if captureWrites { scheduler.emit(.tick(time: scheduler.elapsed)) } else { fflush(nil) }
    return stopReason(of: current) == nil ? 0 : 1
  }

  /// The waiter of an io.popen handle that closes: waits for its command (stopping it as
  /// os.execute's), shows the rest of its other output, returns its wait status (0 for id 0,
  /// a dry run's handle with no command).
  func closeChild(_ id: Int) -> Int32 {
    guard let child = luaChildren.remove(id) else { return 0 }
    let status = waitForChild(pid: child.pid, pidfd: child.pidfd, streams: [], guarded: child).status
    for side in child.sides {
      let deadline = tl_monotonic() + 0.2  // a command's background job may hold it open
      while !side.hasEnded && tl_monotonic() < deadline { usleep(5_000) }
      showSide(side)
    }
    return status
  }

  /// `co` was stopped (interrupted, cancelled, timed out): each io.popen command it opened
  /// and left open gets SIGTERM now, SIGKILL after the grace, as a run's commands do. Its
  /// handle closes only when collected, wherever that happens (in the REPL, after the
  /// interrupt is over), and that close would wait for the command to end by itself.
  func stopCommands(openedBy co: LuaCoroutine) {
    for child in luaChildren.opened(by: co) {
      child.end(atDeadline: tl_monotonic(), grace: scheduler.killGrace)
    }
  }

  /// Which of the command's stdout and stderr taskrun reads and shows above the live view:
  /// both while writes are captured, stderr only while it is the terminal.
  func capturedStreams() -> [Bool] {
    [captureWrites, captureWrites && isatty(STDERR_FILENO) != 0]
  }

  /// A close-on-exec pipe: [read end, write end]; the read end blocks only if `blocking`.
  func makePipe(blocking: Bool) -> [Int32]? {
    var fds: [Int32] = [-1, -1]
    guard cs_pipe(&fds) == 0 else { return nil }
    if blocking { _ = fcntl(fds[0], F_SETFL, O_RDONLY) }
    return fds
  }

  /// Starts `/bin/sh -c command` in a process group of its own.
  func spawnShell(_ command: String, input: Int32, output: Int32, error: Int32) -> Result<(pid_t, Int32), CodeError> {
    let argv: [UnsafeMutablePointer<CChar>?] =
      ["/bin/sh", "-c", command].map { word in word.withCString { strdup($0) } } + [nil]
    defer { for word in argv { free(word) } }
    var pid: pid_t = 0, pidfd: Int32 = -1
    let rc = cs_spawn_input("/bin/sh", argv, nil, nil, input, output, error, &pid, &pidfd)
    return rc == 0 ? .success((pid, pidfd)) : .failure(CodeError(code: rc))
  }

  /// Waits for `pid` to exit and returns its wait status, showing what `streams` carry
  /// meanwhile. When the code that waits is stopped (an interrupt unless it is shielded, its
  /// cancellation, its deadline), the command's group gets SIGTERM, then SIGKILL after the
  /// grace or at the next interrupt, and the reason is returned with the status: os.execute
  /// raises it; a closing io.popen handle returns the status and the hook raises soon after.
  func waitForChild(pid: pid_t, pidfd: Int32, streams: [(fd: Int32, stream: Int)], guarded child: LuaChild? = nil)
    -> (status: Int32, stopped: (hook: Int32, reason: String)?)
  {
    var fds = [pollfd(fd: pidfd, events: Int16(POLLIN), revents: 0)]
    for (fd, _) in streams { fds.append(pollfd(fd: fd, events: Int16(POLLIN), revents: 0)) }
    defer { if pidfd >= 0 { Glibc.close(pidfd) } }
    var partial: [[UInt8]] = [[], []]
    var status: Int32 = 0
    var exited: Double?
    var terminated: (at: Double, posted: Int)?
    var stopped: (hook: Int32, reason: String)?
    var nextTick = 0.0
    var buffer = [UInt8](repeating: 0, count: 65536)
    while true {
      if exited == nil {
        let reaped = child?.reap(&status) ?? waitpid(pid, &status, WNOHANG)
        if reaped == pid || (reaped < 0 && errno == ECHILD) {
          if reaped < 0 { status = SIGKILL }  // reaped by the run's end (endDescendants)
          exited = tl_monotonic()
          fds[0].fd = -1
        }
      }
      if let exited, fds.dropFirst().allSatisfy({ $0.fd < 0 }) || tl_monotonic() - exited > 0.2 { break }
      _ = cs_poll(&fds, UInt(fds.count), exited == nil ? 0.05 : 0.01)
      for i in fds.indices.dropFirst() where fds[i].fd >= 0 && fds[i].revents != 0 {
        for _ in 0..<16 {  // at most 1 MiB a round: a command that prints without end is still stopped
          let n = read(fds[i].fd, &buffer, buffer.count)
          if n > 0 { showLines(buffer[0..<n], into: &partial[streams[i - 1].stream]); continue }
          if n == 0 || (errno != EINTR && errno != EAGAIN) { fds[i].fd = -1 }
          if n == 0 || errno != EINTR { break }
        }
      }
      let now = tl_monotonic()
      if captureWrites && now >= nextTick {  // the live view draws while the command runs
        nextTick = now + 1.0 / 15
        scheduler.emit(.tick(time: scheduler.elapsed))
      }
      guard exited == nil else { continue }
      let posted = scheduler.inbox.signalsPosted.load(ordering: .sequentiallyConsistent)
      if let sent = terminated {
        if now - sent.at >= scheduler.killGrace || posted > sent.posted {
          kill(-pid, SIGKILL)
          terminated = (.infinity, .max)
        }
      } else if let reason = stopReason(of: child == nil ? current : child?.owner) {
        stopped = reason
        kill(-pid, SIGTERM)
        terminated = (now, scheduler.inbox.signalsPosted.load(ordering: .sequentiallyConsistent))
      }
    }
    for stream in partial.indices where !partial[stream].isEmpty { showLines([10], into: &partial[stream]) }
    return (status, stopped)
  }

  /// Why the Lua code `co` waiting for a command has been stopped (the command must end), as
  /// the interrupt hook says it: 1 cancelled, 2 interrupted, 3 timed out; nil if it has not.
  /// No coroutine (the top level's handle closed after it ended): only an interrupt stops it.
  private func stopReason(of co: LuaCoroutine?) -> (hook: Int32, reason: String)? {
    scheduler.absorbSignals()  // the scheduler hears a Ctrl-C now: nothing else starts
    // Code taskrun calls itself (a __tostring, an observer) waiting on a command: bounded in
    // time as it is in instructions.
    let bound = tl_bound_expired()
    if bound > 0 {
      let what = tl_bound_what().map { " in " + String(cString: $0) } ?? ""
      return (
        0, "stopped after \(Int(bound)) s waiting for a command\(what) (taskrun bounds the Lua code it calls itself)"
      )
    }
    switch tl_stop_kind(co?.control) {  // the hook's own rule (shim.c)
    case 1: return (1, "cancelled")
    case 2: return (2, "interrupted")
    case 3: return (3, "timed out")
    default: return nil
    }
  }

  /// Shows whole lines of `bytes` above the view (after the partial line `pending` holds).
  func showLines(_ bytes: some Collection<UInt8>, into pending: inout [UInt8]) {
    pending += bytes
    while let newline = pending.firstIndex(of: 10) {
      scheduler.message(String(decoding: pending[..<newline], as: UTF8.self), from: current?.op)
      pending.removeSubrange(...newline)
    }
  }

  /// Shows the whole lines an io.popen or os.execute command's output has brought, after the
  /// partial line `pending` holds (and keeps the new partial line there).
  func showSide(_ side: SideOutput, into pending: inout [UInt8]) {
    showLines(side.take().bytes, into: &pending)
  }

  /// Shows what an io.popen command's other output has brought; at its end, a last partial
  /// line too.
  private func showSide(_ side: SideOutput) {
    var (bytes, done) = side.take()
    if done && !bytes.isEmpty && bytes.last != 10 { bytes.append(10) }
    var pending: [UInt8] = []
    showLines(bytes, into: &pending)
  }

  /// `true` and "exit" 0, or nil with "exit" and the code or "signal" and the number.
  func pushExecResult(_ status: Int32, on s: LuaStack) -> Int32 {
    let signal = status & 0x7f
    let code = signal == 0 ? (status >> 8) & 0xff : signal
    if signal == 0 && code == 0 { s.push(true) } else { s.pushNil() }
    s.push(signal == 0 ? "exit" : "signal")
    s.push(Int(code))
    return 3
  }

  /// nil, "what: reason", errno: as Lua's io functions fail.
  func pushFailure(_ code: Int32, _ what: String, on s: LuaStack) -> Int32 {
    s.pushNil()
    s.push("\(what): \(String(cString: strerror(code)))")
    s.push(Int(code))
    return 3
  }
}

/// An errno from starting a command.
struct CodeError: Error {
  let code: Int32
}
