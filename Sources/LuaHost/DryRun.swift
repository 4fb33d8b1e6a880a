// DryRun: the Lua environment of -n, `taskrun graph`, --list and --list-names: nothing runs or writes.
import CLua
import CLuaShim
import Glibc
import TaskEngine

extension ScriptHost {
  /// Runs dryrun.lua on the globals (once, when `dryRun` is set): os.execute and io.popen say
  /// what they would run, writes are refused, C modules are not loaded. Requests (`sh`,
  /// `sleep`, `run`, `wait`) are answered by `dryRunRequest`.
  func applyDryRun() {
    let s = stack
    loadChunk("dryrun.lua", as: "=[dry run]")
    lua_rawgeti(L, tl_registryindex(), lua_Integer(LUA_RIDX_GLOBALS))
    pushFunction { host, s in  // note(text, faked)
      guard let text = s.string(1) else { return 0 }
      host.dryRunNote(text, faked: s.boolean(2))
      return 0
    }
    pushFunction { _, s in  // null_handle(mode): io.popen's handle over /dev/null, closed as a command that exited 0
      let mode = s.string(1) == "w" ? "w" : "r"
      let fd = open("/dev/null", (mode == "w" ? O_WRONLY : O_RDONLY) | O_CLOEXEC)
      guard fd >= 0 else { throw ScriptError("io.popen: cannot open /dev/null") }
      guard tl_push_child_file(s.L, fd, mode, 0) == 1 else {
        Glibc.close(fd)
        throw ScriptError("io.popen: cannot open /dev/null")
      }
      return 1
    }
    if tl_pcall(L, 3, 0, 0) != LUA_OK { fatalError("taskrun dryrun.lua: \(s.describe(-1))") }
  }

  /// Prints "(dry run) text" as the script's output (to stderr when standard output is the
  /// graph); `faked`: a command's result was assumed, so the plan may differ from a run's.
  func dryRunNote(_ text: String, faked: Bool) {
    if faked { dryRunAssumed.append(text) }
    let note = "(dry run) " + text
    if scheduler.sinks.isEmpty {
      writeStandardError(note + "\n")
    } else {
      scheduler.message(note, from: nil)
    }
  }

  /// After a dry run whose top level used commands' results (taken as success with no
  /// output), says that the plan may not be what a run declares; nil when none was used.
  public var dryRunCaveat: String? {
    guard !dryRunAssumed.isEmpty else { return nil }
    let shown = dryRunAssumed.prefix(3).joined(separator: "; ") + (dryRunAssumed.count > 3 ? "; …" : "")
    return "taskrun: the script's top level used the result of \(dryRunAssumed.count) command"
      + (dryRunAssumed.count == 1 ? "" : "s") + " (\(shown)), taken in this dry run as success with no output: "
      + "a run may declare other operations"
  }
}
