// DryRun: the Lua environment of -n, `taskrun graph`, --list, --list-names and completion: nothing runs or writes.
import CLua
import CLuaShim
import Glibc
import TaskEngine

extension ScriptHost {
  /// Runs dryrun.lua on the globals (once, when `dryRun` is set): os.execute and io.popen say
  /// what they would run, writes are refused, C modules are not loaded. Requests (`sleep`,
  /// `run`, `wait`) are answered by `dryRunRequest`, `sh` by the `DryRunExecutor`.
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
    pushFunction { _, s in  // held_back(file): a file just opened for reading is a terminal or taskrun's standard input
      s.push(Self.heldBack(s))
      return 1
    }
    if tl_pcall(L, 4, 0, 0) != LUA_OK { fatalError("taskrun dryrun.lua: \(s.describe(-1))") }
  }

  /// Whether the Lua file at index 1 reads a terminal (a read would wait for someone to type)
  /// or taskrun's standard input (`/dev/stdin`: a pipe's text belongs to the real run; a file
  /// reads as empty as `io.stdin` does). A device such as /dev/null is read as it is.
  private static func heldBack(_ s: LuaStack) -> Bool {
    guard let raw = luaL_testudata(s.L, 1, LUA_FILEHANDLE),
      let file = raw.assumingMemoryBound(to: luaL_Stream.self).pointee.f
    else { return false }
    let fd = fileno(file)
    guard fd >= 0 else { return false }
    if isatty(fd) != 0 { return true }
    var opened = stat(), input = stat()
    guard fstat(fd, &opened) == 0, fstat(STDIN_FILENO, &input) == 0 else { return false }
    return input.st_mode & S_IFMT != S_IFCHR && opened.st_dev == input.st_dev && opened.st_ino == input.st_ino
  }

  /// Loads `path` only to read what it declares (`--list`, `taskrun graph`, shell completion,
  /// the check whether a subcommand's name is a target): a dry run in which what the script
  /// writes to standard output or error goes where `print` goes (a message for the sinks:
  /// standard error, or nowhere), never into the listing; a last line without its newline too.
  public func loadToRead(path: String) throws {
    dryRun = true
    writesAreMessages = true
    defer { flushWrites() }
    try load(path: path)
  }

  /// The executor of the top level's `sh` in a dry run: it starts nothing, and its note of
  /// what it would run is a faked result (`dryRunNote`).
  func dryRunExecutor() -> DryRunExecutor {
    DryRunExecutor(inbox: scheduler.inbox) { [unowned self] text in dryRunNote(text, faked: true) }
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
