// Text that goes to the kernel with a command (argv words, shell text, env, cwd): the one
// place where what exec(2) and the environment cannot carry is refused.
import Glibc
import TaskEngine

/// The checks every piece of a command from Lua goes through. The kernel takes C strings, so a
/// NUL would cut a word short without a word; an environment entry is `NAME=value`, so a name
/// with `=` (or none at all) would set another variable than the one written.
enum CommandText {
  /// `text` unless it holds a NUL byte (an argv word, the shell text, an env value, a cwd).
  static func word(_ text: String, _ what: @autoclosure () -> String) throws -> String {
    guard !holdsNUL(text) else {
      throw ScriptError("\(what()) must not contain a NUL byte (got \(quoted(text)))")
    }
    return text
  }

  /// Whether `text` holds a NUL byte: `memchr` over its bytes in place (the generic
  /// `utf8.contains` walked them one index at a time, a sixth of a command's start-up cost).
  static func holdsNUL(_ text: String) -> Bool {
    text.utf8.withContiguousStorageIfAvailable { $0.count > 0 && memchr($0.baseAddress!, 0, $0.count) != nil }
      ?? text.utf8.contains(0)
  }

  /// `name` if it can name an environment variable: not empty, no `=`, no NUL.
  static func environmentName(_ name: String, _ what: @autoclosure () -> String) throws -> String {
    guard !name.isEmpty else { throw ScriptError("\(what()): an environment variable name must not be empty") }
    guard !name.utf8.contains(UInt8(ascii: "=")) else {
      throw ScriptError("\(what()): environment variable name \(quoted(name)) must not contain '='")
    }
    return try word(name, "\(what()): environment variable name")
  }

  /// The text as Lua would write it in a string literal (NUL and other controls escaped).
  static func quoted(_ text: String) -> String {
    var out = "\""
    for byte in text.utf8.prefix(80) {
      switch byte {
      case 0: out += "\\0"
      case UInt8(ascii: "\""): out += "\\\""
      case UInt8(ascii: "\\"): out += "\\\\"
      case 0x20..<0x7f: out.unicodeScalars.append(Unicode.Scalar(byte))
      default: out += "\\\(byte)"
      }
    }
    return out + (text.utf8.count > 80 ? "...\"" : "\"")
  }
}
