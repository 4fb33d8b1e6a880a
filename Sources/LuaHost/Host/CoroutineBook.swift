// CoroutineBook: the host's bookkeeping of coroutines: which live, which runs, which wait to resume.
import CLua
import CLuaShim

/// Every coroutine that has not ended (each knows its index in `live`), finished threads kept
/// for reuse with their registry references, the coroutine running now, and the resumptions
/// waiting for the loop. Stored inline in the host (no exclusivity checks: one thread).
struct CoroutineBook {
  var live: [LuaCoroutine] = []
  var idleThreads: [(thread: OpaquePointer, ref: Int32)] = []
  /// The coroutine whose code is running now (nil between resumes).
  var current: LuaCoroutine?
  /// The Lua thread whose call into the host is in progress (handlers run on its stack).
  var callState: OpaquePointer?
  /// Resumptions waiting for the loop (never nested inside another coroutine's run).
  var runnable: [() -> Void] = []
  var drainScheduled = false
  /// The light userdata that marks a yield as a request to the scheduler.
  let requestMarker = UnsafeMutableRawPointer.allocate(byteCount: 1, alignment: 1)
  /// Arms the interrupt hook on the running coroutine when its slice ends or on Ctrl-C.
  let watchdog = tl_watchdog_new()!
}
