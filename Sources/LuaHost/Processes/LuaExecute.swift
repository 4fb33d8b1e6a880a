// LuaExecute: os.execute in a coroutine taskrun drives waits by yielding, as sh() does.
import CLua
import CLuaShim
import Dispatch
import FoundationEssentials
import Glibc
import TaskEngine

/// An os.execute command a suspended coroutine waits for. The scheduler's loop looks at it
/// between other operations' events: whether it has exited, what it printed (shown above the
/// live view), and stops it when the coroutine is stopped.
final class LuaExecution {
  let child: LuaChild
  /// Why it was stopped (the reason its os.execute raises), once it was.
  var stopped: String?
  /// SIGTERM sent: when, and how many interrupts had been posted then.
  var terminated: (at: Double, posted: Int)?
  /// The timer that looks at it again.
  var ticker: TimerID?
  /// When it was seen to exit, and its wait status.
  var exited: Double?
  var status: Int32 = 0
  /// A partial line of each captured stream (0 stdout, 1 stderr).
  var partial: [[UInt8]] = [[], []]

  init(child: LuaChild) { self.child = child }
}

extension ScriptHost {
  /// The `execute` request (the prelude's os.execute where it can yield): starts `command` as
  /// os.execute does and answers `true, ok|nil, "exit"|"signal", n` once it has exited, or
  /// raises the reason it was stopped for.
  func executeRequest(_ co: LuaCoroutine, command: String) {
    if !captureWrites { fflush(nil) }  // what Lua wrote before comes first
    let started: Result<LuaChild, CodeError> = startChild(command, input: -1)
    let child: LuaChild
    switch started {
    case .failure(let error):
      return succeed(co) { s in self.pushFailure(error.code, "/bin/sh", on: s) }
    case .success(let started): child = started
    }
    let execution = LuaExecution(child: child)
    co.pending = .execute(execution)
    for side in child.sides { DispatchQueue.global().async { side.readToEnd() } }
    tick(execution, co, every: 0.0002)
  }

  /// Shows what the command printed so far; sends SIGKILL to a stopped command after the
  /// grace or at the next interrupt; once it has exited (and its output ended, or 0.2 s
  /// passed: a background job may hold the pipes), answers the coroutine. Looks again after
  /// `interval`, 0.2 ms at first, then twice as long each time up to 1/50 s (no thread waits
  /// for the command: a short one is answered at once, a long one costs 15 looks a second).
  private func tick(_ execution: LuaExecution, _ co: LuaCoroutine, every interval: Double) {
    let child = execution.child
    for (i, side) in child.sides.enumerated() { showSide(side, into: &execution.partial[i]) }
    if execution.exited == nil {
      var status: Int32 = 0
      let reaped = child.reap(&status)
      if reaped == child.pid || reaped < 0 {
        execution.status = reaped < 0 ? SIGKILL : status  // < 0: reaped by the run's end
        execution.exited = tl_monotonic()
        Glibc.close(child.pidfd)
      }
    }
    if let exited = execution.exited {
      if child.sides.allSatisfy(\.hasEnded) || tl_monotonic() - exited > 0.2 {
        for (i, side) in child.sides.enumerated() {
          showSide(side, into: &execution.partial[i])
          if !execution.partial[i].isEmpty { showLines([10], into: &execution.partial[i]) }
        }
        co.pending = nil
        if let reason = execution.stopped { return fail(co, reason) }
        let status = execution.status
        return succeed(co) { s in self.pushExecResult(status, on: s) }
      }
    } else if let sent = execution.terminated {
      let posted = scheduler.inbox.signalsPosted.load(ordering: .sequentiallyConsistent)
      if tl_monotonic() - sent.at >= scheduler.killGrace || posted > sent.posted {
        child.signal(SIGKILL)
        execution.terminated = (.infinity, .max)
      }
    }
    execution.ticker = scheduler.after(interval) { [unowned self] in
      tick(execution, co, every: min(interval * 2, 1.0 / 50))
    }
  }

  /// The coroutine waiting for `execution` is stopped: its command gets SIGTERM (SIGKILL
  /// later), and os.execute raises `reason` once it has exited.
  func stopExecution(_ execution: LuaExecution, reason: String) {
    guard execution.stopped == nil else { return }
    execution.stopped = reason
    execution.child.signal(SIGTERM)
    execution.terminated = (tl_monotonic(), scheduler.inbox.signalsPosted.load(ordering: .sequentiallyConsistent))
  }
}
