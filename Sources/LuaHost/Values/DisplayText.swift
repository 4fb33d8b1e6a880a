// Text from Lua that taskrun draws on the terminal (names, labels, descriptions): one check.
import TaskEngine

/// The characters a name, label or description from Lua must not hold: each of these ends up
/// inside a line taskrun draws (a finished line, a live row, the summary), where a control
/// character would move the cursor, wipe the screen or break the line, and a bidirectional
/// control would reorder what follows it. Refused: C0 controls (NUL, tab, newline, ESC, …),
/// DEL, C1 controls (U+0080–U+009F), the line and paragraph separators (U+2028, U+2029) and the
/// bidirectional embeddings, overrides and isolates (U+202A–U+202E, U+2066–U+2069).
enum DisplayText {
  /// Whether `text` holds none of the refused characters (`TerminalText` decides which).
  static func isClean(_ text: String) -> Bool { TerminalText.isClean(text) }

  static func refused(_ scalar: Unicode.Scalar) -> Bool { TerminalText.refused(scalar) }

  /// `text` as a Lua string literal, the refused characters escaped (`"x\27[2J"`,
  /// `"a\u{202E}b"`), cut after 60 characters: for the message that refuses it.
  static func quoted(_ text: String) -> String {
    var out = "\""
    for (n, scalar) in text.unicodeScalars.enumerated() {
      if n == 60 { out += "…"; break }
      switch scalar {
      case "\"": out += "\\\""
      case "\\": out += "\\\\"
      default:
        if refused(scalar) { out += TerminalText.escape(scalar) } else { out.unicodeScalars.append(scalar) }
      }
    }
    return out + "\""
  }
}

extension ScriptHost {
  /// `text`, if it holds no character `DisplayText` refuses; else an error saying which field
  /// (`what`: "operation: field 'name'", "bad argument #1 to 'mutex'") and showing it escaped.
  /// The host function's caller's `file:line:` is put in front, as for every host error.
  @discardableResult
  func displayText(_ text: String, _ what: @autoclosure () -> String) throws -> String {
    guard DisplayText.isClean(text) else {
      throw ScriptError("\(what()) must not contain control characters (got \(DisplayText.quoted(text)))")
    }
    return text
  }

  /// As `displayText`, for argument `n` of `function`, in the words Lua uses for arguments.
  func displayArgument(_ text: String, _ n: Int, _ function: String) throws {
    guard DisplayText.isClean(text) else {
      throw ScriptError.badArgument(
        n, to: function, expected: "text without control characters", got: DisplayText.quoted(text))
    }
  }
}
