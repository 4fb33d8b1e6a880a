// Reading spec tables (operation{}, queue{}, sh options) with messages that name the field.
import CLua
import CLuaShim
import TaskEngine

extension ScriptHost {
  /// Rejects unknown fields (with the closest valid one) and positional entries.
  func checkFields(_ s: LuaStack, _ table: Int32, valid: [String], in what: String) throws {
    for key in s.keys(table) {
      if case .name(let name) = key, valid.contains(name) { continue }
      throw fieldError(key, valid: valid, in: what)
    }
  }

  /// The error for a key a spec does not take (`list`: it may also hold a list of children).
  func fieldError(_ key: LuaStack.TableKey, valid: [String], in what: String, list: Bool = false) -> ScriptError {
    let fields = "(valid fields: \(valid.joined(separator: ", "))" + (list ? ", and the children as a list)" : ")")
    switch key {
    case .name(let name):
      let hint = suggestion(for: name, among: valid)
      return ScriptError("\(what): unknown field '\(name)'" + (hint.isEmpty ? "" : "; \(hint)") + " \(fields)")
    case .index(let n) where !list:
      return ScriptError("\(what): unexpected positional value #\(n); fields are named \(fields)")
    case .index(let n):
      return ScriptError("\(what): unexpected key [\(n)]; the children must be a list from 1 \(fields)")
    case .other(let type):
      return ScriptError("\(what): unexpected \(type) key; fields are named \(fields)")
    }
  }

  /// Calls `body` with the value at `i` when it is a single item (`isItem`), else with each
  /// element of the list at `i` (`conditions = c` or `conditions = { c, ... }`).
  func eachItem(
    _ s: LuaStack, _ i: Int32, isItem: (Int32) -> Bool, list: String,
    _ body: (Int32) throws -> Void
  ) throws {
    let i = s.absolute(i)
    if isItem(i) { return try body(i) }
    guard s.type(i) == LUA_TTABLE else { throw ScriptError("\(list) (got \(s.typeName(i)))") }
    let count = s.rawLength(i)
    for key in s.keys(i) {
      if case .index(let n) = key, n >= 1 && n <= count { continue }
      if case .name(let name) = key { throw ScriptError("\(list) (got a table with the key '\(name)')") }
      throw ScriptError("\(list) (got a table with keys other than 1 to \(count))")
    }
    for k in 0..<count {
      s.rawGet(i, k + 1)
      defer { s.pop() }
      try body(s.top)
    }
  }

  func optionalString(_ s: LuaStack, _ table: Int32, _ field: String, in what: String) throws -> String? {
    s.rawGet(table, field)
    defer { s.pop() }
    return try stringField(s, at: -1, field, in: what)
  }

  func optionalNumber(_ s: LuaStack, _ table: Int32, _ field: String, in what: String) throws -> Double? {
    s.rawGet(table, field)
    defer { s.pop() }
    return try numberField(s, at: -1, field, in: what)
  }

  func optionalBoolean(_ s: LuaStack, _ table: Int32, _ field: String, in what: String) throws -> Bool? {
    s.rawGet(table, field)
    defer { s.pop() }
    return try booleanField(s, at: -1, field, in: what)
  }

  /// The value at `i` of the field `field`: nil if absent, an error if not a string.
  func stringField(_ s: LuaStack, at i: Int32, _ field: String, in what: @autoclosure () -> String) throws -> String? {
    if s.isNil(i) { return nil }
    guard let value = s.string(i) else {
      throw ScriptError("\(what()): field '\(field)' must be a string (got \(s.typeName(i)))")
    }
    return value
  }

  /// As `stringField`, telling also whether the string is printable ASCII only (`plain`).
  func stringField(
    _ s: LuaStack, at i: Int32, _ field: String, in what: @autoclosure () -> String, plain: inout Bool
  ) throws -> String? {
    if s.isNil(i) { return nil }
    guard let value = s.string(i, plain: &plain) else {
      throw ScriptError("\(what()): field '\(field)' must be a string (got \(s.typeName(i)))")
    }
    return value
  }

  /// A finite number: NaN and ±inf are refused here, where every number field comes in.
  func numberField(_ s: LuaStack, at i: Int32, _ field: String, in what: @autoclosure () -> String) throws -> Double? {
    if s.isNil(i) { return nil }
    guard let value = s.number(i) else {
      throw ScriptError("\(what()): field '\(field)' must be a number (got \(s.typeName(i)))")
    }
    return try LuaNumber.finite(value, "\(what()): field '\(field)'")
  }

  func booleanField(_ s: LuaStack, at i: Int32, _ field: String, in what: @autoclosure () -> String) throws -> Bool? {
    if s.isNil(i) { return nil }
    guard s.type(i) == LUA_TBOOLEAN else {
      throw ScriptError("\(what()): field '\(field)' must be a boolean (got \(s.typeName(i)))")
    }
    return s.boolean(i)
  }

  /// A command at `i` (a string, or a list of argv words) with `env` and `cwd` read from the
  /// table at `options` (if it is one).
  func commandSpec(_ s: LuaStack, _ i: Int32, options: Int32, function: String, field: String? = nil) throws
    -> CommandSpec
  {
    var place: String { field.map { "\(function): field '\($0)'" } ?? "bad argument #1 to '\(function)'" }
    var spec: CommandSpec
    if let text = s.string(i) {
      // Usually decided by the first character (Foundation's trimming cost 8,000 instructions).
      guard !text.unicodeScalars.allSatisfy(\.properties.isWhitespace) else {
        throw ScriptError("\(place): the command is empty")
      }
      spec = CommandSpec(.shell(try CommandText.word(text, "\(place): the command")))
    } else if s.type(i) == LUA_TTABLE {
      var argv: [String] = []
      for k in 1...max(1, s.rawLength(i)) where s.rawLength(i) > 0 {
        s.rawGet(i, k)
        defer { s.pop() }
        guard let word = try s.commandWord(-1, "\(place): argv element #\(k)") else {
          throw ScriptError("\(place): argv element #\(k) must be a string (got \(s.typeName(-1)))")
        }
        argv.append(try CommandText.word(word, "\(place): argv element #\(k)"))
      }
      guard !argv.isEmpty else { throw ScriptError("\(place): the argv list is empty") }
      spec = CommandSpec(.argv(argv))
    } else {
      throw ScriptError("\(place) must be a command string or an argv list (got \(s.typeName(i)))")
    }
    guard s.type(options) == LUA_TTABLE else {
      if !s.isNil(options) {
        throw ScriptError.badArgument(2, to: function, expected: "options table", got: s.typeName(options))
      }
      return spec
    }
    let what = field == nil ? "\(function) options" : function
    if field == nil { try checkFields(s, options, valid: ["env", "cwd", "check"], in: what) }
    spec.directory = try optionalString(s, options, "cwd", in: what).map {
      try CommandText.word($0, "\(what): field 'cwd'")
    }
    if s.rawGet(options, "env") != LUA_TNIL {
      defer { s.pop() }
      let env = s.top
      guard s.type(env) == LUA_TTABLE else {
        throw ScriptError("\(what): field 'env' must be a table of NAME = value (got \(s.typeName(env)))")
      }
      for key in s.keys(env) {
        guard case .name(let name) = key else {
          throw ScriptError("\(what): field 'env' must map names to strings")
        }
        _ = try CommandText.environmentName(name, "\(what): field 'env'")
        s.rawGet(env, name)
        defer { s.pop() }
        guard let value = try s.commandWord(-1, "\(what): env value '\(name)'") else {
          throw ScriptError("\(what): env value '\(name)' must be a string (got \(s.typeName(-1)))")
        }
        spec.environment[name] = try CommandText.word(value, "\(what): env value '\(name)'")
      }
    } else {
      s.pop()
    }
    return spec
  }
}
