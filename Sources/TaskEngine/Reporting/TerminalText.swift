// TerminalText: text from outside (a command's output, the cluster, the command line, Lua) made safe to print on a terminal.
/// The one place that decides which characters taskrun does not write raw to a terminal,
/// and how it shows them instead. Refused: C0 controls (NUL, ESC, carriage return, …), DEL,
/// C1 controls (U+0080–U+009F), the line and paragraph separators (U+2028, U+2029) and the
/// bidirectional embeddings, overrides and isolates (U+202A–U+202E, U+2066–U+2069): each could
/// move the cursor, erase or rewrite lines taskrun drew, change the terminal's state or
/// reorder what follows. A refused character is shown as Lua writes it in a string, `\27`,
/// `\r`, `\u{202E}`, so what was there stays visible and nothing acts on the terminal.
public enum TerminalText {
  /// Whether `text` holds none of the refused characters (`keepingLines`: newline and tab
  /// are allowed). Reads UTF-8 bytes: the usual printable ASCII costs one comparison a byte.
  public static func isClean(_ text: String, keepingLines: Bool = false) -> Bool {
    // Read in place (a small string from its own bytes, a native one from its buffer); a
    // mutable copy for `withUTF8` cost a retain, a release and a closure context a name.
    if let clean = text.utf8.withContiguousStorageIfAvailable({ isClean($0, keepingLines: keepingLines) }) {
      return clean
    }
    var text = text
    return text.withUTF8 { isClean($0, keepingLines: keepingLines) }
  }

  static func isClean(_ bytes: UnsafeBufferPointer<UInt8>, keepingLines: Bool) -> Bool {
    var i = 0
    while i < bytes.count {
      let b = bytes[i]
      if b >= 0x20 && b < 0x7F { i += 1; continue }
      if keepingLines && (b == 0x0A || b == 0x09) { i += 1; continue }
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

  public static func refused(_ scalar: Unicode.Scalar) -> Bool {
    switch scalar.value {
    case 0..<0x20, 0x7F...0x9F, 0x2028...0x202E, 0x2066...0x2069: true
    default: false
    }
  }

  /// How a refused character is shown: `\n`, `\t`, `\r`, `\27`, `\u{202E}`.
  public static func escape(_ scalar: Unicode.Scalar) -> String {
    switch scalar {
    case "\n": "\\n"
    case "\t": "\\t"
    case "\r": "\\r"
    default: scalar.value < 0x80 ? "\\\(scalar.value)" : "\\u{\(String(scalar.value, radix: 16, uppercase: true))}"
    }
  }

  /// `text` with every refused character escaped; with `keepingLines`, newlines and tabs stay
  /// (a message of several lines, a traceback). For taskrun's own messages and the fields in
  /// them that came from outside: an error, a cluster's reason, a progress description.
  public static func escaped(_ text: String, keepingLines: Bool = false) -> String {
    if isClean(text, keepingLines: keepingLines) { return text }
    var out = ""
    for scalar in text.unicodeScalars {
      if refused(scalar) && !(keepingLines && (scalar == "\n" || scalar == "\t")) {
        out += escape(scalar)
      } else {
        out.unicodeScalars.append(scalar)
      }
    }
    return out
  }

  /// Whether `outputLine` would return `line` as it is (read in place where it can be: a
  /// line of output is a Substring of contiguous UTF-8, and most lines are plain).
  public static func isCleanLine<Line: StringProtocol>(_ line: Line) -> Bool {
    line.utf8.withContiguousStorageIfAvailable({ isClean($0, keepingLines: true) })
      ?? isClean(String(line), keepingLines: true)
  }

  /// One line of a command's output as a report shows it: its colours and styles (SGR
  /// sequences, `ESC [ … m`, as compilers and test runners print them) and tabs are kept,
  /// with a reset at the line's end when a style is still on; every other refused character
  /// (cursor movement, erasing, a carriage return, a title) is escaped, so the line cannot
  /// erase or rewrite the lines taskrun writes around it.
  public static func outputLine<Line: StringProtocol>(_ line: Line) -> String {
    if isCleanLine(line) { return String(line) }
    var out = ""
    var styled = false
    let scalars = Array(line.unicodeScalars)
    var i = 0
    while i < scalars.count {
      let scalar = scalars[i]
      if scalar == "\u{1B}", i + 1 < scalars.count, scalars[i + 1] == "[" {
        var j = i + 2
        while j < scalars.count, ("0"..."9").contains(scalars[j]) || scalars[j] == ";" || scalars[j] == ":" { j += 1 }
        if j < scalars.count, scalars[j] == "m" {  // SGR: a style, kept
          for k in i...j { out.unicodeScalars.append(scalars[k]) }
          styled = j > i + 2 && !(j == i + 3 && scalars[i + 2] == "0")  // not a reset
          i = j + 1
          continue
        }
      }
      if refused(scalar) && scalar != "\t" { out += escape(scalar) } else { out.unicodeScalars.append(scalar) }
      i += 1
    }
    return styled ? out + "\u{1B}[0m" : out
  }
}

extension TerminalText {
  /// Writes one of taskrun's messages (`taskrun: …`, an error, a warning) and a newline to
  /// standard error, what came from outside in it escaped (lines and tabs kept).
  public static func writeMessage(_ text: String) {
    writeStandardError(escaped(text, keepingLines: true) + "\n")
  }
}
