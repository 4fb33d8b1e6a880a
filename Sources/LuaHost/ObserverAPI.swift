// Observers: activity(label) and timeout(seconds), attached with observers = {...} or
// op:add_observer(o). (The rest of the Advanced NSOperations vocabulary builds on this.)
import CLua
import CLuaShim
import TaskEngine

extension ScriptHost {
  /// What an observer value does to the operation it is attached to.
  enum Observer {
    case activity(String)
    case timeout(Double)
  }

  /// The metatable that marks observer values (a plain table with `kind` and a setting).
  func installObserverKind() {
    let s = stack
    s.newTable()
    s.push("observer")
    s.rawSet(-2, "__name")
    s.push("observer")
    s.rawSet(-2, "__metatable")
    pushFunction { host, s in
      switch host.observer(at: 1, on: s) {
      case .activity(let label)?: s.push("<observer activity \(label)>")
      case .timeout(let seconds)?: s.push("<observer timeout \(formatSeconds(seconds))>")
      case nil: s.push("observer")
      }
      return 1
    }
    s.rawSet(-2, "__tostring")
    observerMeta = s.ref()
  }

  func observerFunctions() -> [(String, HostFunction)] {
    [
      ("activity", { host, s in
        guard let label = s.string(1), !label.isEmpty else { throw s.badArgument(1, "activity", "non-empty string") }
        host.pushObserver(kind: "activity", key: "label", on: s) { s.push(label) }
        return 1
      }),
      ("timeout", { host, s in
        guard let seconds = s.number(1), seconds > 0, seconds.isFinite else {
          throw s.badArgument(1, "timeout", "positive number of seconds")
        }
        host.pushObserver(kind: "timeout", key: "seconds", on: s) { s.push(seconds) }
        return 1
      }),
    ]
  }

  private func pushObserver(kind: String, key: String, on s: LuaStack, value: () -> Void) {
    s.newTable(hash: 2)
    s.push(kind)
    s.rawSet(-2, "kind")
    value()
    s.rawSet(-2, key)
    pushRef(observerMeta, on: s)
    lua_setmetatable(s.L, -2)
  }

  /// The observer at `i`, if it is one.
  func observer(at i: Int32, on s: LuaStack) -> Observer? {
    guard s.type(i) == LUA_TTABLE, lua_getmetatable(s.L, i) != 0 else { return nil }
    pushRef(observerMeta, on: s)
    let same = lua_rawequal(s.L, -1, -2) != 0
    s.pop(2)
    guard same else { return nil }
    defer { s.pop(2) }
    s.rawGet(i, "kind")
    switch s.string(-1) {
    case "activity":
      s.rawGet(i, "label")
      return s.string(-1).map(Observer.activity)
    case "timeout":
      s.rawGet(i, "seconds")
      return s.number(-1).map(Observer.timeout)
    default:
      s.pushNil()
      return nil
    }
  }

  /// Attaches the observer at `i` to `op` (before it starts).
  func attachObserver(_ op: OperationNode, _ s: LuaStack, _ i: Int32, what: String) throws {
    guard let observer = observer(at: i, on: s) else {
      throw ScriptError("\(what): observers are made by activity(label) or timeout(seconds) (got \(s.typeName(i)))")
    }
    guard op.state == .pending else {
      throw ScriptError("cannot add an observer to '\(op.name)': it already \(op.isFinished ? "finished" : "started")")
    }
    switch observer {
    case .activity(let label): if !op.activities.contains(label) { op.activities.append(label) }
    case .timeout(let seconds): op.timeout = min(op.timeout ?? seconds, seconds)
    }
  }

  /// `observers = { o, ... }` in operation{}.
  func attachObservers(_ op: OperationNode, _ s: LuaStack, _ i: Int32, what: String) throws {
    let i = s.absolute(i)
    if observer(at: i, on: s) != nil { return try attachObserver(op, s, i, what: what) }
    guard s.type(i) == LUA_TTABLE else {
      throw ScriptError("\(what): field 'observers' must be a list of observers (got \(s.typeName(i)))")
    }
    for k in 0..<s.rawLength(i) {
      s.rawGet(i, k + 1)
      defer { s.pop() }
      try attachObserver(op, s, s.top, what: what)
    }
  }
}
