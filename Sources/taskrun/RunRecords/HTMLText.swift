// HTMLText: text from the run store made safe inside an HTML page (markup, quotes and control characters escaped).
import TaskEngine

enum HTMLText {
  /// `text` for an element's content or a quoted attribute: control characters shown as
  /// TerminalText shows them (`\x07`; newlines and tabs kept where `keepingLines`), then
  /// `& < > " '` as entities. Invalid UTF-8 was read as U+FFFD already.
  static func escaped(_ text: String, keepingLines: Bool = false) -> String {
    let visible = TerminalText.escaped(text, keepingLines: keepingLines)
    var out = ""
    out.reserveCapacity(visible.utf8.count)
    for c in visible.unicodeScalars {
      switch c {
      case "&": out += "&amp;"
      case "<": out += "&lt;"
      case ">": out += "&gt;"
      case "\"": out += "&quot;"
      case "'": out += "&#39;"
      default:
        // Not characters HTML allows (C1 controls TerminalText did not take, noncharacters).
        let v = c.value
        if (0x7F...0x9F).contains(v) || (0xFDD0...0xFDEF).contains(v) || v & 0xFFFE == 0xFFFE {
          out += "\u{FFFD}"
        } else {
          out.unicodeScalars.append(c)
        }
      }
    }
    return out
  }
}
