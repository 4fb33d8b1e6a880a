// Cleanup: `cleanup = function(op, why, message)`, run after a body stopped for a failure, a cancel or a timeout.
import CLua
import CLuaShim
import TaskEngine

/// An operation's cleanup function, run in a coroutine of its own that may call `sh`, `sleep`
/// and `wait` although the operation was cancelled; the first Ctrl-C spares it, its grace or
/// a second Ctrl-C stops it.
final class LuaCleanup: OperationCleanup {
  /// Seconds a cleanup gets when the script gives no `cleanup_grace`.
  static let defaultGrace = 10.0

  let function: Int32
  let grace: Double
  unowned let host: ScriptHost
  /// The coroutine running it, while it runs.
  private var coroutine: LuaCoroutine?
  /// Why it was stopped, if it was (its own error then says no more).
  private var stoppedBecause: String?

  init(function: Int32, grace: Double, host: ScriptHost) {
    self.function = function
    self.grace = grace
    self.host = host
  }

  func run(
    _ operation: OperationNode, why: FailureKind, message: String, scheduler: Scheduler,
    done: @escaping () -> Void
  ) {
    let co = host.makeCoroutine(function: function, op: operation) { [unowned self] end in
      coroutine = nil
      if case .failed(let failure) = end, stoppedBecause == nil {
        host.reportWarning("the cleanup of '\(operation.name)' failed: \(failure.message)")
      }
      done()
    }
    stoppedBecause = nil
    co.isCleanup = true
    co.control.pointee.shielded = 1  // the first Ctrl-C is what it cleans up after
    coroutine = co
    let s = LuaStack(L: co.thread)
    host.pushHandle(.operation, id: operation.id, on: s)
    s.push(Self.word(for: why))
    s.push(message)
    host.resume(co, arguments: 3)
  }

  func stop(_ operation: OperationNode, scheduler: Scheduler, reason: String) {
    guard let coroutine else { return }
    stoppedBecause = reason
    coroutine.control.pointee.cancelled = 1  // the hook raises; what it waits on ends
    host.interruptPending(coroutine, reason: reason)
  }

  /// What `why` says: "failed", "cancelled", "timeout" or "interrupted".
  static func word(for kind: FailureKind) -> String {
    switch kind {
    case .timeout, .cancelled, .interrupted: kind.rawValue
    default: "failed"
    }
  }
}

extension ScriptHost {
  /// `cleanup = function(op, why, message)` and `cleanup_grace = seconds` of operation{}.
  func attachCleanup(_ op: OperationNode, _ s: LuaStack, _ spec: SpecSlots, what: String) throws {
    let function = spec[.cleanup], graceSlot = spec[.cleanupGrace]
    if s.isNil(function) {
      if !s.isNil(graceSlot) { throw ScriptError("\(what): 'cleanup_grace' needs a 'cleanup' function") }
      return
    }
    guard s.type(function) == LUA_TFUNCTION else {
      throw ScriptError("\(what): field 'cleanup' must be a function (got \(s.typeName(function)))")
    }
    var grace = LuaCleanup.defaultGrace
    if let value = try numberField(s, at: graceSlot, "cleanup_grace", in: what) {
      grace = try seconds(value, "cleanup_grace", in: what)
    }
    s.pushValue(function)
    op.cleanup = LuaCleanup(function: s.ref(), grace: grace, host: self)
  }
}
