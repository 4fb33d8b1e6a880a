// ScriptHost: one Lua state bound to one scheduler; loads workflow scripts and runs them.
import CLua
import CLuaShim
import Dispatch
import FoundationEssentials
import Glibc
import TaskEngine

/// A failure that stops the command line: a script error (exit 2) with its message, or
/// (`operationFailed`) a `wait` at the top level that raised because an operation failed,
/// which the command line reports as the failed run it is (exit 1).
public struct HostError: Error, CustomStringConvertible {
  public let description: String
  public var operationFailed = false
  public init(_ description: String, operationFailed: Bool = false) {
    self.description = description
    self.operationFailed = operationFailed
    SpillFolder.shared.keepNamed(in: description)  // shown to the user: the output files it names stay
  }
}

/// Owns the `lua_State` and drives every coroutine in it. Not Sendable: it and its scheduler
/// live on the thread that created them.
public final class ScriptHost {
  public let scheduler: Scheduler
  let L: OpaquePointer
  var stack: LuaStack { LuaStack(L: L) }
  @exclusivity(unchecked) var functions: [HostFunction] = []
  /// Per handle kind: metatables, handle caches, method tables, nouns (see Handles).
  @exclusivity(unchecked) var handles = HandleTables()
  /// Live, idle and running coroutines, and those waiting to resume (see Coroutine).
  @exclusivity(unchecked) var coroutines = CoroutineBook()
  /// Progress nodes Lua holds handles to, and what Lua attached to them (see ProgressAPI).
  @exclusivity(unchecked) var progressHandles = ProgressHandles()
  /// The fields operation{} and group{} take (see SpecSlots), made on first use (a `lazy`
  /// field would keep the exclusivity check on every operation{}).
  @exclusivity(unchecked) private var keys: (operation: SpecKeys?, group: SpecKeys?)
  var operationKeys: SpecKeys {
    if let made = keys.operation { return made }
    keys.operation = specKeys(SpecField.allCases)
    return keys.operation!
  }
  var groupKeys: SpecKeys {
    if let made = keys.group { return made }
    keys.group = specKeys([.name, .after, .queue, .priority, .when, .conditions, .timeout, .observers, .weight, .desc])
    return keys.group!
  }
  /// Condition values and what each stands for (see ConditionAPI).
  let conditions = BoxRegistry<LuaCondition>()
  /// Per operation id: the conditions that handed their decision on to the one about to be
  /// evaluated (see `evaluateCondition`).
  var conditionChains: [Int: [(ref: Int32, name: String)]] = [:]
  /// Observer values made by observer{}, activity, timeout and background (see ObserverAPI).
  let observers = BoxRegistry<Observer>()
  /// The REPL's formatter and `string.match`.
  var refs = LibraryRefs()
  /// `taskrun test`: busted's runtime and what each operation reports (see TestSuite).
  let tests = TestRuntime()
  /// io.write to standard output (and error) through the reporters (see Writes).
  @exclusivity(unchecked) var writes = WriteCapture()
  /// `--executor` and the Slurm job name of this run (see SlurmAPI).
  @exclusivity(unchecked) var executor = ExecutorChoice()
  /// `--sandbox`: what operations may widen, when the run's commands are confined (nil: not).
  @exclusivity(unchecked) public var commandSandbox: CommandSandbox?
  /// io.popen's commands whose handles are open (LuaProcesses).
  var luaChildren = LuaChildren()
  /// The REPL: each `run()` at the top level, with nothing running, is a run of its own
  /// (its counts and elapsed time start from zero).
  @exclusivity(unchecked) public var freshRunPerRequest = false
  /// `confirm(prompt)`: --yes, or how to ask.
  @exclusivity(unchecked) var confirm = ConfirmAnswers()
  /// The Lua library's version: "Lua 5.4.4".
  public static let luaRelease = "Lua \(LUA_VERSION_MAJOR).\(LUA_VERSION_MINOR).\(LUA_VERSION_RELEASE)"

  /// Script arguments (`arg`).
  let arguments: [String]
  @exclusivity(unchecked) var scriptPath = "?"
  /// The Lua heap's cap (see `memoryLimit`).
  let heap: HeapLimit
  /// `-n`, `taskrun graph`, `--list`: the script is loaded, nothing runs or writes (see
  /// `dryRunRequest` and DryRun.swift); `dryRunAssumed`: the commands whose result the top
  /// level got without running them.
  @exclusivity(unchecked) public var dryRun = false {
    didSet { if dryRun && !oldValue { applyDryRun() } }
  }
  @exclusivity(unchecked) var dryRunAssumed: [String] = []
  /// What the last failing `wait` at the top level raised (an operation that did not succeed).
  @exclusivity(unchecked) var failedWait: String?
  /// The status `os.exit` asked for: the run has ended and the process should exit with it.
  @exclusivity(unchecked) public internal(set) var exitCode: Int32?

  /// A state with the standard libraries, the taskrun API and the interrupt hook.
  /// `memoryLimit`: bytes (0: none); nil takes the default, below what the process can get.
  public init(scheduler: Scheduler, arguments: [String] = [], memoryLimit: Int? = nil) {
    self.scheduler = scheduler
    self.arguments = arguments
    let budget = MemoryBudget.current().luaHeap(asked: memoryLimit)
    L = tl_newstate(budget.bytes)
    heap = HeapLimit(bytes: budget.bytes, isDefault: memoryLimit == nil, account: tl_heap_account(L))
    if budget.lowered {
      writeStandardError(
        "taskrun: note: --memory \(memoryLimit! >> 20) MB is more than this process can get (ulimit -v, "
          + "its cgroup, physical memory): the Lua heap is capped at \(budget.bytes >> 20) MB\n")
    }
    _ = Self.dispatchInstalled
    tl_extraspace(L).pointee = Unmanaged.passUnretained(self).toOpaque()
    tl_openlibs(L)
    tl_gc_generational(L)
    tl_guard_sethook(L)
    tl_guard_finalizers(L)
    installExit()
    installProcessFunctions()
    installAPI()
    scheduler.onHalt = { [unowned self] in wakeTopLevel() }
    setArguments(script: nil)
  }

  /// Installed once per process, before the first state exists.
  static let dispatchInstalled: Void = tl_set_dispatch(hostDispatch)

  /// Seconds a body may run before it yields to others (once the watchdog armed the hook).
  static let timeSlice = 0.02

  deinit {
    close()
    coroutines.requestMarker.deallocate()
    handles.progressKey.deallocate()
  }

  /// Closes the Lua state as lua.c does at exit (pending finalizers run, `__gc` and `__close`);
  /// nothing may run Lua afterwards. A command that ends the process calls it and skips the
  /// rest of the teardown.
  public func close() {
    guard !isClosed else { return }
    isClosed = true
    tl_watchdog_free(coroutines.watchdog)
    tl_closestate(L)
  }
  private var isClosed = false

  /// Registers a host function and returns its index for `tl_pushhostfn`.
  func register(_ function: @escaping HostFunction) -> Int32 {
    functions.append(function)
    return Int32(functions.count - 1)
  }

  func pushFunction(_ function: @escaping HostFunction) {
    tl_pushhostfn(L, register(function))
  }

  /// Builds the API tables and runs the prelude.
  func installAPI() {
    let s = stack
    installHandleKinds()
    installObserverKind()
    installConditionKind()
    s.newTable()  // api
    for (name, function) in globalFunctions() + observerFunctions() + conditionFunctions() + writeFunctions() {
      pushFunction(function)
      s.rawSet(-2, name)
    }
    pushHandle(.queue, id: scheduler.mainQueue.id)
    s.rawSet(-2, "main_queue")
    pushProgressGlobal()
    s.rawSet(-2, "progress")
    let api = s.ref()
    loadChunk("prelude.lua", as: "=[taskrun]")
    tl_pushlightuserdata(L, coroutines.requestMarker)
    s.pushRef(api)
    s.pushRef(handles.methods[.operation]!)
    s.pushRef(handles.methods[.queue]!)
    tl_pushwatchfns(L, coroutines.watchdog)
    pushFunction { host, s in  // coroutine.running() hands out the thread: never reuse it
      if let co = host.current, co.thread == s.L { co.escaped = true }
      return 0
    }
    if tl_pcall(L, 7, 0, 0) != LUA_OK { fatalError("taskrun prelude: \(s.describe(-1))") }
    s.unref(api)
    lua_rawgeti(L, tl_registryindex(), lua_Integer(LUA_RIDX_GLOBALS))
    s.rawGet(-1, "string")
    s.rawGet(-1, "match")
    refs.stringMatch = s.ref()
    s.pop(2)
    s.push("completed")
    progressHandles.completedAddress = lua_tolstring(L, -1, nil)
    progressHandles.completedKey = s.ref()  // kept alive for the state's life, so the address stays valid
  }

  // MARK: Loading and running scripts

  /// Runs a script's top level as a coroutine, driving the scheduler while it waits (a script
  /// may call `run` or `wait`). Throws a HostError with `file:line` if it fails to load or run.
  public func load(path: String) throws {
    var data: Data
    if path == "-" {  // the script on standard input, as lua.c reads it
      data = Data(readAll(STDIN_FILENO) ?? [])
    } else {
      var info = stat()
      let exists = stat(path, &info) == 0
      guard !exists || info.st_mode & S_IFMT != S_IFDIR else {
        throw HostError("cannot read '\(path)': it is a directory, not a script")
      }
      let fd = open(path, O_RDONLY | O_CLOEXEC)
      guard fd >= 0, let contents = readAll(fd) else {
        let code = errno
        if fd >= 0 { Glibc.close(fd) }
        // The reason as it is: out of descriptors is not a permission problem.
        let reason =
          code == EACCES
          ? "permission denied"
          : code == ENOENT || !exists
            ? "no such file"
            : String(cString: strerror(code)).lowercased()
        throw HostError("cannot read '\(path)': \(reason)")
      }
      Glibc.close(fd)
      data = Data(contents)
    }
    // As lua.c: a UTF-8 byte order mark, then a first line starting with # (#!/usr/bin/env
    // taskrun) are skipped; the line's newline stays, so line numbers hold.
    if data.starts(with: [0xEF, 0xBB, 0xBF]) { data.removeFirst(3) }
    if data.first == UInt8(ascii: "#") {
      data.removeFirst(data.firstIndex(of: 10).map { $0 - data.startIndex } ?? data.count)
    }
    scriptPath = path == "-" ? "stdin" : path
    setArguments(script: path)
    try execute(chunk: data, name: path == "-" ? "=stdin" : "@" + path, arguments: arguments)
  }

  /// Runs source text as a chunk named `name` (as `load` does for a file).
  public func execute(source: String, name: String = "=(source)") throws {
    try execute(chunk: Data(source.utf8), name: name)
  }

  /// Runs a chunk like `execute`; returns its results as the REPL shows them (tab-separated),
  /// or nil when it returned nothing.
  @discardableResult
  /// `arguments`: the chunk's `...` (a script's arguments, as lua.c passes them).
  func execute(chunk: Data, name: String, format: Bool = false, arguments: [String] = []) throws -> String? {
    let s = stack
    let status = chunk.withUnsafeBytes { bytes in
      tl_load(L, bytes.baseAddress?.assumingMemoryBound(to: CChar.self), bytes.count, name, "t")
    }
    guard status == LUA_OK else {
      let message = s.describe(-1)
      s.pop()
      if message.contains("binary chunk") {
        throw HostError("\(name.dropFirst()): cannot load a precompiled chunk; give the Lua source")
      }
      throw HostError(message)
    }
    let function = s.ref()
    defer { s.unref(function) }
    failedWait = nil
    var shown: String?
    switch runToEnd(
      function: function,
      arguments: { s in
        guard lua_checkstack(s.L, Int32(clamping: arguments.count) + 1) != 0 else { return 0 }
        for argument in arguments { s.push(argument) }
        return Int32(arguments.count)
      },
      returned: { [unowned self] results, count in
        if format, count > 0 { shown = show(count, from: results) }
      })
    {
    case .returned?:
      return shown
    case .failed(let failure)?:
      // Raised by a wait on a failed operation and not caught: the run failed, and the
      // operation's own failure was reported with its traceback already.
      if let waited = failedWait, failure.raisedByHook == 0, failure.message.hasSuffix(waited) {
        throw HostError(failure.message, operationFailed: true)
      }
      // At the top level a single frame repeats the message's file:line; deeper ones help.
      // Stopped by Ctrl-C: where it stood is the message's file:line; a traceback is noise.
      // "(...tail calls...)" is no frame of the user's.
      let frames =
        scheduler.halted
        ? 0
        : failure.traceback.split(separator: "\n").filter { !$0.contains("(...tail calls...)") }.count - 1
      // error({}) carries no position: the message still names the script.
      let message =
        failure.message.hasPrefix("(error object is") ? "\(name.dropFirst()): " + failure.message : failure.message
      throw HostError(message + (frames < 2 ? "" : "\n" + failure.traceback))
    case nil:
      throw HostError("\(name.dropFirst()): the script never finished")
    }
  }

  /// The REPL's line for the top `count` values of `results` (an ended coroutine's stack,
  /// read while it is still anchored), which it takes off that stack.
  private func show(_ count: Int32, from results: LuaStack) -> String {
    let s = stack
    guard lua_checkstack(L, count + 3) != 0 else {  // the formatter, the values, a bounded call's thread
      return "(cannot show the result: \(count) values are more than a Lua stack holds)"
    }
    pushFormatter()
    lua_xmove(results.L, L, count)  // the values themselves: nothing pushed onto their stack
    // Formatting calls the values' metamethods (__tostring, __name, and __lt through the
    // sort of keys): bounded, as every call into user code outside a body.
    guard tl_bounded_call(L, count, 1, "the metamethods of a result the REPL shows") == LUA_OK else {
      defer { s.pop() }
      return "(cannot show the result: \(s.errorMessage(-1)))"
    }
    defer { s.pop() }
    return s.string(-1) ?? "?"
  }

  /// Pushes the formatter of format.lua, compiling it the first time.
  private func pushFormatter() {
    if refs.formatter == LUA_NOREF {
      loadChunk("format.lua", as: "=[format]")
      if tl_pcall(L, 0, 1, 0) != LUA_OK { fatalError("taskrun format.lua: \(stack.describe(-1))") }
      refs.formatter = stack.ref()
    }
    stack.pushRef(refs.formatter)
  }

  /// `arg`: the script's path at 0 and the arguments after `--` from 1, as lua.c does.
  func setArguments(script: String?) {
    let s = stack
    s.newTable(array: Int32(arguments.count))
    if let script {
      s.push(script)
      s.rawSet(-2, 0)
    }
    for (i, argument) in arguments.enumerated() {
      s.push(argument)
      s.rawSet(-2, i + 1)
    }
    lua_rawgeti(L, tl_registryindex(), lua_Integer(LUA_RIDX_GLOBALS))
    s.pushValue(-2)
    s.rawSet(-2, "arg")
    s.pop(2)
  }
}
