// LoadDeadline: a time limit on loading a script that taskrun only reads on its own behalf (shell completion, the check whether a subcommand's name is a target).
import Dispatch
import Glibc
import LuaHost
import Synchronization
import TaskEngine

/// Stops a load that has not finished after `seconds` as Ctrl-C stops one: the interrupt flag
/// ends Lua code at its next instruction (a loop, in a pcall or not), the scheduler is told
/// (nothing more starts), and the Lua thread is woken from a blocking call (a read of a FIFO)
/// every `Session.wakeAfter` until the load has ended. Lua code that no hook reaches (a
/// finalizer that loops) cannot be stopped: after `Session.stuckAfter` more, `stuck` is
/// called on another thread and must end the process.
final class LoadDeadline: Sendable {
  let seconds: Double
  /// 0: running, 1: expired, 2: ended in time, 3: ended after expiring.
  private let state = Atomic<Int>(0)

  /// Starts the clock for a load on the current thread (the Lua thread), whose scheduler has
  /// its signals attached (`Session.attachSignals`, which also prepares the wake-up).
  init(seconds: Double, inbox: Inbox, stuck: @escaping @Sendable () -> Void) {
    self.seconds = seconds
    DispatchQueue.global().asyncAfter(deadline: .now() + seconds) { [self] in
      guard state.compareExchange(expected: 0, desired: 1, ordering: .sequentiallyConsistent).exchanged else { return }
      ScriptHost.interruptLua(true)
      inbox.postSignal(SIGALRM)
      wake()
      DispatchQueue.global().asyncAfter(deadline: .now() + Session.stuckAfter) { [self] in
        if state.load(ordering: .sequentiallyConsistent) == 1 { stuck() }
      }
    }
  }

  private func wake() {
    DispatchQueue.global().asyncAfter(deadline: .now() + Session.wakeAfter) { [self] in
      guard state.load(ordering: .sequentiallyConsistent) == 1 else { return }
      ScriptHost.wakeLuaThread()
      wake()
    }
  }

  /// Called on the Lua thread when the load has ended, however: whether the time ran out
  /// first (then the interrupt is taken back, so that what runs next is not stopped).
  func end() -> Bool {
    if state.compareExchange(expected: 0, desired: 2, ordering: .sequentiallyConsistent).exchanged { return false }
    state.store(3, ordering: .sequentiallyConsistent)
    ScriptHost.interruptLua(false)
    return true
  }
}
