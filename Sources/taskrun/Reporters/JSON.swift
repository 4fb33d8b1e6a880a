// JSON: a small writer for the NDJSON event stream and trace files (no reflection, no allocation-heavy encoders).

import TaskEngine

/// A JSON value built in code.
enum JSON {
  case string(String)
  case number(Double)
  case int(Int)
  case bool(Bool)
  case null
  case array([JSON])
  case object([(String, JSON)])

  var text: String {
    var out = ""
    write(to: &out)
    return out
  }

  func write(to out: inout String) {
    switch self {
    case .string(let s): JSON.quote(s, into: &out)
    case .number(let n): out += n.isFinite ? (n == n.rounded() && abs(n) < 1e15 ? String(Int(n)) : String(n)) : "null"
    case .int(let n): out += String(n)
    case .bool(let b): out += b ? "true" : "false"
    case .null: out += "null"
    case .array(let items):
      out += "["
      for (i, item) in items.enumerated() {
        if i > 0 { out += "," }
        item.write(to: &out)
      }
      out += "]"
    case .object(let fields):
      out += "{"
      for (i, (key, value)) in fields.enumerated() {
        if i > 0 { out += "," }
        JSON.quote(key, into: &out)
        out += ":"
        value.write(to: &out)
      }
      out += "}"
    }
  }

  static func quote(_ s: String, into out: inout String) {
    out += "\""
    for scalar in s.unicodeScalars {
      switch scalar {
      case "\"": out += "\\\""
      case "\\": out += "\\\\"
      case "\n": out += "\\n"
      case "\r": out += "\\r"
      case "\t": out += "\\t"
      case _ where TerminalText.refused(scalar):  // C0 as JSON needs; DEL, C1 and bidi too, for a terminal
        let hex = String(scalar.value, radix: 16)
        out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
      default: out.unicodeScalars.append(scalar)
      }
    }
    out += "\""
  }
}
