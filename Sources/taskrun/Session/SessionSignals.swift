// SessionSignals: how Ctrl-C, the third Ctrl-C and Ctrl-Z reach a session's scheduler and its Lua code.
import Dispatch
import LuaHost
import TaskEngine

extension Session {
  /// Seconds an interrupt may stay unhandled before the Lua thread is woken from a blocking
  /// call (io.read on a terminal, a read of an io.popen pipe), and before taskrun gives up on it.
  static let wakeAfter = 0.1
  static let stuckAfter = 1.5

  /// Sends a run's signals to the scheduler: the first Ctrl-C stops Lua code at once (the
  /// scheduler then cancels everything), the third exits (`thirdExits`: not in the REPL,
  /// which survives Ctrl-C, though its Lua is woken from a blocking read as a run's is).
  /// Ctrl-Z restores the terminal first.
  func attachSignals(thirdExits: Bool = true, also: @escaping @Sendable () -> Void = {}) {
    ScriptHost.prepareWakeup()
    SignalWatcher.shared.attach(
      inbox: scheduler.inbox, processes: scheduler.processes,
      immediately: { [inbox = scheduler.inbox, processes = scheduler.processes] _, count in
        ScriptHost.interruptLua(true)
        also()
        if thirdExits && count >= 3 { Taskrun.exitNow(ExitCode.interrupted.rawValue) }
        // Lua blocked in a system call (io.read of a terminal, a pipe's read) sees the
        // interrupt only when the call returns: it is made to return (EINTR), and the hook
        // raises `interrupted` at the next instruction. The REPL's evaluations too: it
        // once skipped this, and io.read() or an io.popen read ignored Ctrl-C.
        let posted = inbox.signalsPosted.load(ordering: .sequentiallyConsistent)
        DispatchQueue.global().asyncAfter(deadline: .now() + Session.wakeAfter) {
          guard inbox.signalsHandled.load(ordering: .sequentiallyConsistent) < posted else { return }
          ScriptHost.wakeLuaThread()
        }
        guard thirdExits else { return }  // the REPL's prompt leaves Ctrl-C unhandled: no exit
        // Lua code that runs without hooks (a looping __gc finalizer) never lets the
        // scheduler see the interrupt: after a while, end the run from here.
        DispatchQueue.global().asyncAfter(deadline: .now() + Session.stuckAfter) {
          guard inbox.signalsHandled.load(ordering: .sequentiallyConsistent) < posted else { return }
          writeStandardError(
            "taskrun: interrupted, but Lua code that cannot be interrupted "
              + "(a __gc finalizer?) holds the run; exiting\n")
          processes.endDescendants(within: 0.5)
          Taskrun.exitNow(ExitCode.interrupted.rawValue)
        }
      },
      onSuspend: { Taskrun.showCursor() },
      onResume: { LiveReporter.resumed.store(true, ordering: .sequentiallyConsistent) })
  }
}
