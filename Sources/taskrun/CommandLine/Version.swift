// Version: what `taskrun --version` and the REPL's banner say.
import LuaHost

enum TaskrunVersion {
  static let number = "0.9.0"
  static let text = "taskrun \(number) (\(ScriptHost.luaRelease))"
}
