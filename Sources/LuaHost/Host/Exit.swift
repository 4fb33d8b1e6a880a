// Exit: `os.exit` ends the run the way Ctrl-C does (commands stopped, summary, events), then exits.
import CLua
import CLuaShim
import TaskEngine

extension ScriptHost {
  /// Replaces `os.exit`: C's `exit` from inside a body would leave commands running and the
  /// run unreported. It records the code, ends the run (`Scheduler.end`) and stops the
  /// calling code; the command line exits with `exitCode` once the run is over.
  func installExit() {
    let s = stack
    lua_rawgeti(L, tl_registryindex(), lua_Integer(LUA_RIDX_GLOBALS))
    guard s.rawGet(-1, "os") == LUA_TTABLE else { return s.pop(2) }
    pushFunction { host, s in
      let code: Int32
      switch s.type(1) {
      case LUA_TNONE, LUA_TNIL: code = 0
      case LUA_TBOOLEAN: code = s.boolean(1) ? 0 : 1
      default:
        guard let n = s.number(1), n.isFinite, n == n.rounded(), n >= 0, n <= 255 else {
          throw ScriptError.badArgument(
            1, to: "exit", expected: "an exit status from 0 to 255 or a boolean",
            got: host.describeArgument(s, 1))
        }
        code = Int32(n)
      }
      host.exitCode = host.exitCode ?? code
      host.scheduler.end(because: "os.exit(\(code)) ended the run")
      setInterrupt(true)  // every coroutine stops at its next instruction count, pcall or not
      s.push("os.exit(\(code))")
      return TL_RAISE
    }
    s.rawSet(-2, "exit")
    s.pop(2)
  }

  /// The script's top level (and the REPL's line) waits on no operation of its own: when the
  /// run is interrupted or ended, whatever it waits for (sh, sleep, wait) raises now.
  func wakeTopLevel() {
    let reason = scheduler.endedBy ?? "interrupted"
    // The signal watcher raises the flag too, but after it posts the signal: without this the
    // loop could resume the top level first, and a pcall around `wait` would let it go on.
    if scheduler.endedBy == nil { setInterrupt(true) }
    for co in coroutines.live where co.op == nil && co.pending != nil {
      // The REPL's `run` is not raised out of on Ctrl-C: the halt cancels its operations and
      // it returns false and the summary once they have ended (their commands reaped), as
      // documented. os.exit still stops it.
      if freshRunPerRequest, scheduler.endedBy == nil, case .wait(_, isRun: true)? = co.pending { continue }
      co.interruptReason = reason
      interruptPending(co, reason: reason)
    }
  }
}
