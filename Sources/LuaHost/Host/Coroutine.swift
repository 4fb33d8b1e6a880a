// Coroutine driver: every body and the script's top level run as a coroutine resumed here.
import CLua
import CLuaShim
import FoundationEssentials
import Glibc
import TaskEngine

/// How a coroutine ended: its results left on its own stack, or an error with a traceback.
enum CoroutineEnd {
  /// The results are on the thread's stack only while its `onEnd` runs: the thread is then
  /// pooled (an empty stack) or its anchor released, so it may be collected at any allocation.
  case returned(LuaCoroutine, count: Int32)
  case failed(Failure)

  struct Failure {
    var message: String
    var traceback: String
    /// What the interrupt hook raised, if it did: 1 cancelled, 2 interrupted, 3 timed out.
    var raisedByHook: Int32
  }
}

/// A Lua thread anchored in the registry, with the control block its hook reads.
final class LuaCoroutine {
  let thread: OpaquePointer
  let ref: Int32
  let control: UnsafeMutablePointer<tl_control>
  /// The operation whose body this is (nil: the script's top level).
  let op: OperationNode?
  let onEnd: Ending
  /// What it is suspended on, so cancellation can undo it.
  @exclusivity(unchecked) var pending: Pending?
  /// Why the run woke it (interrupted, os.exit): what its primitive raises.
  @exclusivity(unchecked) var interruptReason: String?
  @exclusivity(unchecked) var isDead = false
  /// Its place in the host's list of live coroutines.
  @exclusivity(unchecked) var liveIndex = 0
  /// Lua code was handed this thread (`coroutine.running()`), so it is never reused.
  @exclusivity(unchecked) var escaped = false
  /// It runs its operation's cleanup: its calls work although the operation was cancelled.
  @exclusivity(unchecked) var isCleanup = false
  /// Implicit progress composition in this coroutine (progress.current(), become_current).
  lazy var progress = ProgressContext()  // most bodies never touch progress
  @exclusivity(unchecked) var progressPrimed = false

  /// Who hears how it ended: an operation's body (`bodyEnded`, with no closure to allocate
  /// per operation), or a handler.
  enum Ending {
    case body(LuaFunctionBody)
    case handler((CoroutineEnd) -> Void)
  }

  enum Pending {
    case sleep(timer: TimerID)
    case command(token: CommandToken)
    /// os.execute's command (in a coroutine that can yield).
    case execute(LuaExecution)
    /// `isRun`: a `run` request, which answers false and the summary when its operations
    /// end cancelled (a `wait` raises).
    case wait([OperationNode], isRun: Bool = false)
    case reschedule
  }

  init(thread: OpaquePointer, ref: Int32, op: OperationNode?, onEnd: Ending) {
    self.thread = thread
    self.ref = ref
    self.op = op
    self.onEnd = onEnd
    // malloc, not `allocate(capacity:)`: that went through posix_memalign (about 230
    // instructions for every body); malloc's 16-byte alignment is all the block needs.
    control = malloc(MemoryLayout<tl_control>.stride)!.bindMemory(to: tl_control.self, capacity: 1)
    control.initialize(to: tl_control())
    control.pointee.thread = thread
  }

  deinit { free(control) }
}

extension ScriptHost {
  /// A coroutine that will call the function `function` (a registry reference).
  func makeCoroutine(
    function: Int32, op: OperationNode?,
    onEnd: @escaping (CoroutineEnd) -> Void
  ) -> LuaCoroutine {
    makeCoroutine(function: function, op: op, ending: .handler(onEnd))
  }

  func makeCoroutine(function: Int32, op: OperationNode?, ending: LuaCoroutine.Ending) -> LuaCoroutine {
    let s = stack
    let thread: OpaquePointer, ref: Int32
    if let idle = coroutines.idleThreads.popLast() {
      (thread, ref) = idle
    } else {
      thread = lua_newthread(L)!
      ref = s.ref()
    }
    s.pushRef(function)
    lua_xmove(L, thread, 1)
    let co = LuaCoroutine(thread: thread, ref: ref, op: op, onEnd: ending)
    co.liveIndex = coroutines.live.count
    coroutines.live.append(co)
    return co
  }

  /// Runs `function` as a coroutine with the values `arguments` pushes (a script's top level
  /// may call sh, sleep or run), driving the scheduler until it ends; nil if it never did.
  /// `returned` reads what it returned (the top `count` values of the stack it is given)
  /// when it returns: only then, since the ended thread is pooled or let go right after.
  func runToEnd(
    function: Int32, arguments: (LuaStack) -> Int32 = { _ in 0 },
    returned: @escaping (LuaStack, Int32) -> Void = { _, _ in }
  ) -> CoroutineEnd? {
    var outcome: CoroutineEnd?
    let co = makeCoroutine(function: function, op: nil) { end in
      if case .returned(let co, let count) = end {
        let results = LuaStack(L: co.thread)
        returned(results, count)
        results.setTop(0)
      }
      outcome = end
    }
    resume(co, arguments: arguments(LuaStack(L: co.thread)))
    scheduler.run(until: { outcome != nil }, onStall: { self.failStalledWaits() })
    return outcome
  }

  /// Resumes `co` with the `arguments` values on top of its stack, then handles what it did:
  /// a request, a plain yield (rescheduled), a return or an error.
  func resume(_ co: LuaCoroutine, arguments: Int32) {
    guard !co.isDead else { return }
    co.pending = nil
    let previous = current
    current = co
    tl_set_current(co.control)
    tl_watchdog_begin(coroutines.watchdog, co.thread, co.control, Self.timeSlice)
    var results: Int32 = 0
    var status = tl_protected_resume(co.thread, L, arguments, &results)
    tl_watchdog_end(coroutines.watchdog)
    tl_set_current(previous?.control)
    current = previous
    let s = LuaStack(L: co.thread)
    if let message = syncProgress(), status == LUA_OK || status == LUA_YIELD {
      s.push(message)  // a bad `completed` stored raw: the body fails with it
      status = LUA_ERRRUN
    }
    switch status {
    case LUA_YIELD:
      if results >= 2, lua_touserdata(co.thread, -results) == coroutines.requestMarker {
        let base = s.top - results + 1
        let kind = s.string(base + 1) ?? ""
        handleRequest(co, kind: kind, base: base + 2, top: s.top)
      } else {
        // A bare yield (time slice or coroutine.yield in a body): let others run, then go on.
        s.pop(results)
        co.pending = .reschedule
        resumeSoon(co) { 0 }
      }
    case LUA_OK where co.control.pointee.shielded == 0 && tl_interrupted() != 0:
      // Ctrl-C woke it from a blocking call (io.read, an io.popen read: EINTR) and it
      // returned straight from that call (`return f:read("a")`, a tail call), so no
      // instruction was left where the hook could raise: it is interrupted all the same,
      // not a success with the failed read's nil.
      s.pop(results)
      co.control.pointee.raised = 2
      end(co, .failed(.init(message: "interrupted", traceback: "", raisedByHook: 2)))
    case LUA_OK:
      if let stop = dueStop(co) {
        s.setTop(0)
        end(co, .failed(.init(message: stop.message, traceback: "", raisedByHook: stop.hook)))
      } else {
        end(co, .returned(co, count: results))
      }
    default:
      let message =
        status == LUA_ERRMEM
        ? "out of memory: the Lua heap reached its limit of \(memoryLimit >> 20) MB ("
          + (memoryLimitIsDefault ? "taskrun's default for this process; --memory sets it)" : "--memory)")
        : s.errorMessage(-1)
      tl_traceback(L, co.thread, message)
      let traceback = cleanTraceback(stack.string(-1) ?? "", message: message)
      stack.pop()
      _ = tl_resetthread(co.thread, L)
      if co.control.pointee.raised == 0, let stop = dueStop(co) {
        end(co, .failed(.init(message: stop.message, traceback: "", raisedByHook: stop.hook)))
      } else {
        end(co, .failed(.init(message: message, traceback: traceback, raisedByHook: co.control.pointee.raised)))
      }
    }
  }

  /// The stop due for a body that has just ended (its deadline passed, it was cancelled, the
  /// run interrupted), which its outcome must be whatever it returned or raised: the hook
  /// looks only every 1000 instructions, so a wait the stop cut short (an io.popen read, an
  /// io.read that failed with EINTR) could return partial data or raise its own error first.
  private func dueStop(_ co: LuaCoroutine) -> (hook: Int32, message: String)? {
    guard case .body = co.onEnd else { return nil }
    switch tl_stop_due(co.control) {
    case 1: return (1, "cancelled")
    case 2: return (2, "interrupted")
    case 3: return (3, "timed out")
    default: return nil
    }
  }

  private func end(_ co: LuaCoroutine, _ how: CoroutineEnd) {
    co.isDead = true
    if case .failed(let failure) = how, failure.raisedByHook != 0 { stopCommands(openedBy: co) }
    let last = coroutines.live.removeLast()
    if last !== co {
      coroutines.live[co.liveIndex] = last
      last.liveIndex = co.liveIndex
    }
    switch co.onEnd {
    case .body(let body): bodyEnded(co, body, how)
    case .handler(let handler): handler(how)
    }
    // A thread that ended cleanly is kept for the next coroutine (a new one costs a state,
    // a stack and a registry slot), unless Lua code may still hold it or left a hook on it.
    if !co.escaped, coroutines.idleThreads.count < Self.idleThreadLimit, lua_status(co.thread) == LUA_OK,
      lua_gettop(co.thread) == 0, lua_gethook(co.thread) == nil
    {
      coroutines.idleThreads.append((co.thread, co.ref))
    } else {
      stack.unref(co.ref)
    }
  }

  static let idleThreadLimit = 64

  /// Resumes `co` from the loop, never from inside another coroutine's host call. `push`
  /// pushes the resume values onto the coroutine's stack and returns how many.
  func resumeSoon(_ co: LuaCoroutine, _ push: @escaping () -> Int32) {
    resumeSoon { [unowned self] in
      guard !co.isDead else { return }
      // A paused operation's body goes on when it is resumed (LuaFunctionBody.holds); the
      // flag is read first, so nothing is made for a body that is not paused.
      if co.op?.isPaused == true, case .body(let body) = co.onEnd,
        body.holds(co, { [unowned self] in resumeSoon(co, push) })
      {
        return
      }
      resume(co, arguments: push())
    }
  }

  /// Runs `step` from the loop, with the other coroutines due.
  func resumeSoon(_ step: @escaping () -> Void) {
    coroutines.runnable.append(step)
    guard !coroutines.drainScheduled else { return }
    coroutines.drainScheduled = true
    scheduler.after(0) { [unowned self] in
      coroutines.drainScheduled = false
      let batch = coroutines.runnable
      coroutines.runnable = []
      for step in batch { step() }
    }
  }

  /// Answers a request with `true, values...`.
  /// `room` is how many values `push` pushes at most.
  func succeed(_ co: LuaCoroutine, room: Int = 4, _ push: @escaping (LuaStack) -> Int32 = { _ in 0 }) {
    resumeSoon(co) {
      let s = LuaStack(L: co.thread)
      _ = lua_checkstack(co.thread, Int32(room) + 1)
      s.push(true)
      return 1 + push(s)
    }
  }

  /// Answers a request with `false, message`: the primitive raises at the user's line.
  func fail(_ co: LuaCoroutine, _ message: String) {
    fail(co, ScriptError(message))
  }

  /// Answers a request with `error`, raised at the line that made it unless it has its own.
  func fail(_ co: LuaCoroutine, _ error: ScriptError) {
    resumeSoon(co) {
      let s = LuaStack(L: co.thread)
      s.push(false)
      s.push(error.description)
      if error.positioned { return 2 }
      s.push(true)
      return 3
    }
  }

  /// Keeps the user's frames: drops the host's own Lua (the prelude, the dry run's and the
  /// sandbox's wrappers, which stand for C functions) and the C plumbing's.
  func cleanTraceback(_ traceback: String, message: String) -> String {
    var lines = traceback.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
    if lines.first == message {
      lines.removeFirst()
    } else if let first = lines.first, message.hasPrefix(first) {
      lines.removeFirst(message.split(separator: "\n", omittingEmptySubsequences: false).count)
    }
    let frames = lines.filter { line in
      !line.contains("[taskrun]") && !line.contains("[dry run]:") && !line.contains("[sandbox]:")
        && !line.trimmed(newlines: false).hasPrefix("[C]:")
    }
    // Only the header left, or only tail-call markers: nothing worth showing.
    guard frames.dropFirst().contains(where: { !$0.contains("(...tail calls...)") }) else { return "" }
    return frames.joined(separator: "\n")
  }
}

/// Sets the process-wide interrupt flag the count hook reads (safe from any thread).
func setInterrupt(_ on: Bool) { tl_interrupt(on ? 1 : 0) }
