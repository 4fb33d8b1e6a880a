// Observers: activity(label) and timeout(seconds), attached with observers = {...} or
// op:add_observer(o). (The rest of the Advanced NSOperations vocabulary builds on this.)
import CLua
import CLuaShim
import TaskEngine

extension ScriptHost {
  /// What an observer value does to the operation it is attached to.
  enum Observer {
    case activity(String)
    /// `cancels`: `timeout(seconds, { cancel = true })`, the talk's timeout observer.
    case timeout(Double, cancels: Bool)
    case background(Double)
    case lua(LuaObserver)
  }

  /// The metatable that marks observer values (boxes, see `pushObserver`) and their description.
  func installObserverKind() {
    pushMarkerMetatable("observer") { host, s in
      switch host.observer(at: 1, on: s) {
      case .activity(let label)?: "<observer activity \(label)>"
      case .timeout(let seconds, let cancels)?:
        "<observer timeout \(formatSeconds(seconds))\(cancels ? ", cancels" : "")>"
      case .background(let grace)?: "<observer background \(formatSeconds(grace))>"
      case .lua?: "<observer>"
      case nil: "observer"
      }
    }
    refuseWrites("an observer")
    observers.install(self)
  }

  func observerFunctions() -> [(String, HostFunction)] {
    [
      ("observer", { host, s in try host.charged(HostCharge.observer, s, field: nil) { try host.createObserver(s) } }),
      (
        "activity",
        { host, s in
          guard let label = s.string(1), !label.isEmpty else { throw s.badArgument(1, "activity", "non-empty string") }
          try host.displayArgument(label, 1, "activity")
          host.pushObserver(.activity(label), on: s)
          return 1
        }
      ),
      (
        "background",
        { host, s in
          guard let grace = s.number(1), grace >= 0, grace.isFinite else {
            throw host.badNumberArgument(s, 1, "background", "number of seconds ≥ 0")
          }
          host.pushObserver(.background(Limits.wait(grace)), on: s)
          return 1
        }
      ),
      (
        "timeout",
        { host, s in
          guard let seconds = s.number(1), seconds > 0, seconds.isFinite else {
            throw host.badNumberArgument(s, 1, "timeout", "positive number of seconds")
          }
          var cancels = false
          if !s.isNil(2) {
            guard s.type(2) == LUA_TTABLE else { throw s.badArgument(2, "timeout", "table { cancel = boolean }") }
            try host.checkFields(s, 2, valid: ["cancel"], in: "timeout")
            cancels = try host.optionalBoolean(s, 2, "cancel", in: "timeout") ?? false
          }
          host.pushObserver(.timeout(seconds, cancels: cancels), on: s)
          return 1
        }
      )
    ]
  }

  /// An observer value: a box around it (what it does cannot be changed from Lua).
  func pushObserver(_ observer: Observer, on s: LuaStack) {
    observers.push(observer, host: self, on: s)
  }

  /// The observer at `i`, if it is one.
  func observer(at i: Int32, on s: LuaStack) -> Observer? {
    observers.value(at: i, host: self, on: s)
  }

  /// Attaches the observer at `i` to `op` (before it starts).
  func attachObserver(_ op: OperationNode, _ s: LuaStack, _ i: Int32, what: String) throws {
    guard let observer = observer(at: i, on: s) else {
      throw ScriptError(
        "\(what): observers are made by observer{}, activity(label), timeout(seconds) or background(grace) (got \(s.typeName(i)))"
      )
    }
    guard op.canTakeObserver else {
      throw ScriptError("cannot add an observer to '\(op.name)': it already \(op.isFinished ? "finished" : "started")")
    }
    switch observer {
    case .activity(let label): if !op.activities.contains(label) { op.activities.append(label) }
    case .timeout(let seconds, true) where seconds <= Limits.maxSeconds:
      op.cancelTimeout = min(op.cancelTimeout ?? seconds, seconds)
    case .timeout(let seconds, false) where seconds <= Limits.maxSeconds:
      op.timeout = min(op.timeout ?? seconds, seconds)
    case .timeout: break  // longer than Limits.maxSeconds: never
    case .lua(let observer): op.observers.append(observer)
    case .background(let grace): op.backgroundGrace = grace
    }
  }

  /// `observers = { o, ... }` in operation{}.
  func attachObservers(_ op: OperationNode, _ s: LuaStack, _ i: Int32, what: String) throws {
    try eachItem(
      s, i, isItem: { observer(at: $0, on: s) != nil },
      list: "\(what): field 'observers' must be a list of observers"
    ) {
      try attachObserver(op, s, $0, what: what)
    }
  }
}

/// `observer { on_start = fn(op), on_produce = fn(op, new), on_finish = fn(op, err) }`:
/// calls the Lua functions it was given (errors are reported, never raised into the run).
final class LuaObserver: OperationObserver {
  unowned let host: ScriptHost
  let refs: [String: Int32]

  init(host: ScriptHost, refs: [String: Int32]) {
    self.host = host
    self.refs = refs
  }

  func operationDidStart(_ op: OperationNode) { call("on_start", op, nil) }
  func operation(_ op: OperationNode, didProduce produced: OperationNode) { call("on_produce", op, produced) }
  func operationDidFinish(_ op: OperationNode) { call("on_finish", op, op) }

  private func call(_ key: String, _ op: OperationNode, _ second: OperationNode?) {
    guard let ref = refs[key] else { return }
    host.callObserver(ref, op, second, key: key)
  }
}

extension ScriptHost {
  static let observerFields = ["on_start", "on_produce", "on_finish"]

  /// `observer { ... }` value: a Lua observer kept in the host, marked like the built-ins.
  func createObserver(_ s: LuaStack) throws -> Int32 {
    guard s.type(1) == LUA_TTABLE else { throw s.badArgument(1, "observer", "table") }
    try checkFields(s, 1, valid: Self.observerFields, in: "observer")
    var refs: [String: Int32] = [:]
    for key in Self.observerFields {
      if s.rawGet(1, key) == LUA_TNIL { s.pop(); continue }
      guard s.type(-1) == LUA_TFUNCTION else {
        defer { s.pop() }
        throw ScriptError("observer: field '\(key)' must be a function (got \(s.typeName(-1)))")
      }
      if s.L != L { lua_xmove(s.L, L, 1) }
      refs[key] = stack.ref()
    }
    pushObserver(.lua(LuaObserver(host: self, refs: refs)), on: s)
    return 1
  }

  /// Calls an observer function with the operation and, for on_produce, the new operation,
  /// for on_finish, the operation's error (nil when it succeeded).
  func callObserver(_ ref: Int32, _ op: OperationNode, _ second: OperationNode?, key: String) {
    let s = LuaStack(L: callState ?? L)
    _ = lua_checkstack(s.L, 4)
    pushRef(ref, on: s)
    pushHandle(.operation, id: op.id, on: s)
    if key == "on_finish" {
      if op.succeeded { s.pushNil() } else { s.push(op.error ?? op.outcome?.rawValue ?? "failed") }
    } else if let second {
      pushHandle(.operation, id: second.id, on: s)
    } else {
      s.pushNil()
    }
    if protectedCall(s, arguments: 2, results: 0) != LUA_OK {
      reportWarning("observer \(key) of '\(op.name)' failed: \(s.errorMessage(-1))")
      s.pop()
    }
  }
}
