// Spec slots: operation{} and group{} tables read in one pass, their keys compared by address.
import CLua
import CLuaShim

/// The fields of operation{}; group{} takes a subset.
enum SpecField: Int, CaseIterable {
  case name, run, sh, env, cwd, progress, after, queue, priority, when, conditions, timeout,
    observers, retries, retry, weight, desc, sandbox, cleanup, cleanupGrace, qos,
    inputs, outputs, depfile, key, fresh, service, ready, interactive

  /// The field's name in Lua. Spelled out: `String(describing:)` of a case goes through
  /// runtime reflection, about 70,000 instructions a name.
  var key: String {
    switch self {
    case .name: "name"
    case .run: "run"
    case .sh: "sh"
    case .env: "env"
    case .cwd: "cwd"
    case .progress: "progress"
    case .after: "after"
    case .queue: "queue"
    case .priority: "priority"
    case .when: "when"
    case .conditions: "conditions"
    case .timeout: "timeout"
    case .observers: "observers"
    case .retries: "retries"
    case .retry: "retry"
    case .weight: "weight"
    case .desc: "desc"
    case .sandbox: "sandbox"
    case .cleanup: "cleanup"
    case .cleanupGrace: "cleanup_grace"
    case .qos: "qos"
    case .inputs: "inputs"
    case .outputs: "outputs"
    case .depfile: "depfile"
    case .key: "key"
    case .fresh: "fresh"
    case .service: "service"
    case .ready: "ready"
    case .interactive: "interactive"
    }
  }
}

/// The fields one kind of spec takes, as the addresses of their interned Lua strings: a short
/// string is unique in its state, so a key is one of these exactly when its address is.
struct SpecKeys {
  let valid: [String]
  let addresses: [(UnsafePointer<CChar>, SpecField)]

  func field(at address: UnsafePointer<CChar>) -> SpecField? {
    for (known, field) in addresses where known == address { return field }
    return nil
  }
}

/// Where each field's value sits on the stack after `readSpec` (nil where it is absent).
struct SpecSlots {
  let base: Int32
  subscript(_ field: SpecField) -> Int32 { base + Int32(field.rawValue) }
}

extension ScriptHost {
  /// Interns the names of `fields` (anchored in the registry for the state's life).
  func specKeys(_ fields: [SpecField]) -> SpecKeys {
    let s = stack
    let addresses = fields.map { field in
      s.push(field.key)
      defer { _ = s.ref() }
      return (lua_tolstring(L, -1, nil)!, field)
    }
    return SpecKeys(valid: fields.map(\.key), addresses: addresses)
  }

  /// Copies the fields of the table at `table` into fresh slots on top of the stack, in one
  /// pass over it. Unknown fields are errors (with the closest valid one), and so are
  /// positional values unless `list` (a group's children). `what` is made only for a message.
  func readSpec(
    _ s: LuaStack, _ table: Int32, _ keys: SpecKeys, list: Bool = false,
    in what: @autoclosure () -> String
  ) throws -> SpecSlots {
    let t = s.absolute(table)
    let count = Int32(SpecField.allCases.count)
    guard lua_checkstack(s.L, count + 4) != 0 else { throw ScriptError("stack overflow") }
    let slots = SpecSlots(base: s.top + 1)
    for _ in 0..<count { s.pushNil() }
    let length = list ? s.rawLength(t) : 0
    s.pushNil()
    while tl_next(s.L, t) != 0 {
      // lua_tolstring only on string keys: on a number it would change the key under lua_next.
      if s.type(-2) == LUA_TSTRING, let field = keys.field(at: lua_tolstring(s.L, -2, nil)) {
        lua_copy(s.L, -1, slots[field])
      } else if list, s.type(-2) == LUA_TNUMBER, let n = s.integer(-2), n >= 1 && n <= length {
        // a child, read by the caller
      } else {
        let key: LuaStack.TableKey =
          s.type(-2) == LUA_TSTRING
          ? .name(s.string(-2)!)
          : s.integer(-2).map { .index($0) } ?? .other(s.typeName(-2))
        s.pop(2)
        throw fieldError(key, valid: keys.valid, in: what(), list: list)
      }
      s.pop()
    }
    return slots
  }

  /// "operation 'build'" (or "operation") for messages about the spec at `table`.
  func subject(_ kind: String, _ s: LuaStack, _ table: Int32) -> String {
    defer { s.pop() }
    guard s.rawGet(table, "name") == LUA_TSTRING, let name = s.string(-1) else { return kind }
    return DisplayText.isClean(name) ? "\(kind) '\(name)'" : "\(kind) \(DisplayText.quoted(name))"
  }
}
