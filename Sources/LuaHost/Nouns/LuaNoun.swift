// LuaNoun: one kind of handle as Lua sees it (fields, setters, methods, description), declared in one place.
import CLua
import CLuaShim
import TaskEngine

/// A field Lua reads from a handle (`op.state`) and, if it has a setter, assigns
/// (`q.max_concurrent = 2`).
struct LuaField<Object> {
  let name: String
  /// Pushes the field's value.
  let get: (ScriptHost, Object, LuaStack) throws -> Void
  /// Sets the field from the value at the given index (nil: Lua cannot set it).
  let set: ((ScriptHost, Object, LuaStack, Int32) throws -> Void)?

  init(
    _ name: String, get: @escaping (ScriptHost, Object, LuaStack) throws -> Void,
    set: ((ScriptHost, Object, LuaStack, Int32) throws -> Void)? = nil
  ) {
    self.name = name
    self.get = get
    self.set = set
  }
}

/// A method Lua calls on a handle (`op:cancel()`), given the object its receiver stands for
/// (the noun checks the receiver, with one message for a call with `.` or on something else).
struct LuaMethod<Object> {
  let name: String
  let call: (ScriptHost, Object, LuaStack) throws -> Int32

  init(_ name: String, _ call: @escaping (ScriptHost, Object, LuaStack) throws -> Int32) {
    self.name = name
    self.call = call
  }
}

/// One kind of handle as Lua sees it, as mlua's `UserData` declares a type's fields and methods:
/// how to find the object behind a handle's id, its fields and their setters, its methods, how
/// it describes itself (`tostring`, the REPL) and what a write it refuses says. The host's
/// metamethods (`Handles.swift`) and the REPL's completion read only this.
struct LuaNoun<Object> {
  let kind: HandleKind
  /// The kind's name ("operation"), and what examples call a value of it ("op"), for the hint
  /// in the message of a method called with `.`.
  let name: String
  let variable: String
  /// The object behind a handle's id.
  let object: (ScriptHost, Int) -> Object
  /// How a message names the object ("operation 'build'").
  let title: (Object) -> String
  let fields: [LuaField<Object>]
  let methods: [LuaMethod<Object>]
  /// Methods the prelude adds in Lua (`wait`): named by hints and completions.
  let luaMethods: [String]
  /// `tostring(handle)`: "<queue q: 3 operations, 1 running, max 2>".
  let describe: (Object) -> String
  /// What assigning `key` says when the field has no setter; the object is nil when no field
  /// has one (the handle is not looked at).
  let refuse: (Object?, String) -> ScriptError
  /// Tried before the methods and fields: pushes the value and returns true, or returns false
  /// (progress's `completed`, whose reads and writes must stay cheap).
  var rawIndex: ((ScriptHost, LuaStack) throws -> Bool)? = nil
  /// Tried before the fields: stores the value and returns true, or returns false.
  var rawNewIndex: ((ScriptHost, LuaStack) throws -> Bool)? = nil

  /// The names of the fields Lua can read.
  var readable: [String] { fields.map(\.name) }
  /// The names of the fields Lua can set.
  var settable: [String] { fields.filter { $0.set != nil }.map(\.name) }
  /// The names of every method, the prelude's too.
  var methodNames: [String] { methods.map(\.name) + luaMethods }

  /// The noun as the host's metamethods use it, whatever its object's type.
  func binding() -> NounBinding {
    var getters: [String: (ScriptHost, Object, LuaStack) throws -> Void] = [:]
    var setters: [String: (ScriptHost, Object, LuaStack, Int32) throws -> Void] = [:]
    for field in fields {
      getters[field.name] = field.get
      if let set = field.set { setters[field.name] = set }
    }
    let known = readable + methodNames
    let (kind, name, variable, object, title, refuse) = (kind, name, variable, object, title, refuse)
    return NounBinding(
      kind: kind, name: name, readOnly: setters.isEmpty, rawIndex: rawIndex, rawNewIndex: rawNewIndex,
      readable: readable, settable: settable, methodNames: methodNames,
      methods: methods.map { method in
        (
          method.name,
          { host, s in
            guard let id = host.handleID(kind, at: 1, on: s) else {
              throw ScriptError.badSelf(method.name, expected: name, got: s.typeName(1), variable: variable)
            }
            return try method.call(host, object(host, id), s)
          }
        )
      },
      get: { host, s, id, key in
        let target = object(host, id)
        guard let get = getters[key] else {
          let hint = suggestion(for: key, among: known)
          throw ScriptError("\(title(target)) has no field '\(key)'" + (hint.isEmpty ? "" : "; \(hint)"))
        }
        try get(host, target, s)
      },
      set: { host, s, id, key, value in
        let target = id.map { object(host, $0) }
        guard let target, let set = setters[key] else { throw refuse(target, key) }
        try set(host, target, s, value)
      },
      describe: { host, id in describe(object(host, id)) })
  }
}

/// A noun with its object type erased: what the host keeps per handle kind (a class, so a
/// metamethod takes it with one reference, not a copy of every closure).
final class NounBinding {
  let kind: HandleKind
  let name: String
  /// No field can be set: a write is refused without looking at the handle.
  let readOnly: Bool
  let rawIndex: ((ScriptHost, LuaStack) throws -> Bool)?
  let rawNewIndex: ((ScriptHost, LuaStack) throws -> Bool)?
  let readable: [String]
  let settable: [String]
  let methodNames: [String]
  /// The methods as host functions that check their receiver.
  let methods: [(String, HostFunction)]
  /// Pushes field `key` of the object with handle id `id`.
  let get: (ScriptHost, LuaStack, Int, String) throws -> Void
  /// Sets field `key` of the object with handle id `id` (nil: refuses) from the value at the
  /// given index.
  let set: (ScriptHost, LuaStack, Int?, String, Int32) throws -> Void
  let describe: (ScriptHost, Int) -> String

  init(
    kind: HandleKind, name: String, readOnly: Bool,
    rawIndex: ((ScriptHost, LuaStack) throws -> Bool)?, rawNewIndex: ((ScriptHost, LuaStack) throws -> Bool)?,
    readable: [String], settable: [String], methodNames: [String], methods: [(String, HostFunction)],
    get: @escaping (ScriptHost, LuaStack, Int, String) throws -> Void,
    set: @escaping (ScriptHost, LuaStack, Int?, String, Int32) throws -> Void,
    describe: @escaping (ScriptHost, Int) -> String
  ) {
    self.kind = kind
    self.name = name
    self.readOnly = readOnly
    self.rawIndex = rawIndex
    self.rawNewIndex = rawNewIndex
    self.readable = readable
    self.settable = settable
    self.methodNames = methodNames
    self.methods = methods
    self.get = get
    self.set = set
    self.describe = describe
  }
}
