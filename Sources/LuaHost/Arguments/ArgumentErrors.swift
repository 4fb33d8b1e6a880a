// ArgumentErrors: a bad argument or receiver of a host function, in Lua's own words, written once.
import CLua
import CLuaShim

extension ScriptError {
  /// lauxlib's `luaL_argerror`: "bad argument #2 to 'io.popen' (invalid mode)".
  static func badArgument(_ n: Int, to function: String, _ reason: String) -> ScriptError {
    ScriptError("bad argument #\(n) to '\(function)' (\(reason))")
  }

  /// lauxlib's `luaL_typeerror`: "bad argument #1 to 'sleep' (number expected, got nil)".
  static func badArgument(_ n: Int, to function: String, expected: String, got: String) -> ScriptError {
    badArgument(n, to: function, "\(expected) expected, got \(got)")
  }

  /// A method called with `.` or on something else: "bad self for 'cancel' (operation
  /// expected, got string; use op:cancel(...))".
  static func badSelf(_ method: String, expected: String, got: String, variable: String) -> ScriptError {
    ScriptError("bad self for '\(method)' (\(expected) expected, got \(got); use \(variable):\(method)(...))")
  }
}

extension LuaStack {
  /// Argument `n` of `function` is not what it takes: named by its type, as Lua does.
  func badArgument(_ n: Int32, _ function: String, _ expected: String) -> ScriptError {
    .badArgument(Int(n), to: function, expected: expected, got: typeName(n))
  }
}
