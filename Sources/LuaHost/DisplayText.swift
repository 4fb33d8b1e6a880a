// Text from Lua that taskrun draws on the terminal (names, labels, descriptions): one check.
import TaskEngine

/// The characters a name, label or description from Lua must not hold: each of these ends up
/// inside a line taskrun draws (a finished line, a live row, the summary), where a control
/// character would move the cursor, wipe the screen or break the line, and a bidirectional
/// control would reorder what follows it. Refused: C0 controls (NUL, tab, newline, ESC, …),
/// DEL, C1 controls (U+0080–U+009F), the line and paragraph separators (U+2028, U+2029) and the
/// bidirectional embeddings, overrides and isolates (U+202A–U+202E, U+2066–U+2069).
enum DisplayText {
  /// Whether `text` holds none of the refused characters. Reads UTF-8 bytes: names are checked
  /// for every operation, and the usual printable ASCII costs one comparison a byte.
  static func isClean(_ text: String) -> Bool {
    var text = text
    return text.withUTF8 { bytes in
      var i = 0
      while i < bytes.count {
        let b = bytes[i]
        if b >= 0x20 && b < 0x7F { i += 1; continue }
        if b < 0x20 || b == 0x7F { return false }
        if b == 0xC2, i + 1 < bytes.count, (0x80...0x9F).contains(bytes[i + 1]) { return false }
        if b == 0xE2, i + 2 < bytes.count {
          let (b1, b2) = (bytes[i + 1], bytes[i + 2])
          if b1 == 0x80 && (0xA8...0xAE).contains(b2) { return false }
          if b1 == 0x81 && (0xA6...0xA9).contains(b2) { return false }
        }
        i += 1
      }
      return true
    }
  }

  static func refused(_ scalar: Unicode.Scalar) -> Bool {
    switch scalar.value {
    case 0..<0x20, 0x7F...0x9F, 0x2028...0x202E, 0x2066...0x2069: true
    default: false
    }
  }

  /// `text` as a Lua string literal, the refused characters escaped (`"x\27[2J"`,
  /// `"a\u{202E}b"`), cut after 60 characters: for the message that refuses it.
  static func quoted(_ text: String) -> String {
    var out = "\""
    for (n, scalar) in text.unicodeScalars.enumerated() {
      if n == 60 { out += "…"; break }
      switch scalar {
      case "\"": out += "\\\""
      case "\\": out += "\\\\"
      case "\n": out += "\\n"
      case "\t": out += "\\t"
      case "\r": out += "\\r"
      default:
        if scalar.value < 0x80 && refused(scalar) { out += "\\\(scalar.value)" }
        else if refused(scalar) { out += "\\u{\(String(scalar.value, radix: 16, uppercase: true))}" }
        else { out.unicodeScalars.append(scalar) }
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
      throw ScriptError("bad argument #\(n) to '\(function)' (text without control characters expected, got \(DisplayText.quoted(text)))")
    }
  }
}
