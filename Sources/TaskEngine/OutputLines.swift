// OutputLines: one stream of a command's output, cut into whole lines as a terminal shows them.
import FoundationEssentials

/// What a stream has written since its last whole line. Reporters get whole lines only, so
/// output of two commands never interleaves mid-line; a line overwritten with "\r" (curl,
/// wget, rsync) feeds each finished stretch to progress patterns as it comes.
struct OutputLines {
  /// Bytes after the last whole line (and, of a line overwritten with "\r", after the last "\r").
  private(set) var partial = Data()
  /// Past this, a line with no end in sight (binary output) is passed on as it is.
  static let longest = 64 << 10

  /// Adds `data`: `lines` gets the whole lines it completes, as shown; `stretch` each
  /// finished stretch of a line being overwritten. A "\r" at the very end may be half of
  /// "\r\n": its stretch is passed on, but kept until the next byte says.
  mutating func add(_ data: Data, lines: (String) -> Void, stretch: (String) -> Void) {
    var pending = partial + data
    if let lastNewline = pending.lastIndex(of: 10) {
      lines(Self.asShown(pending[pending.startIndex...lastNewline]))
      pending = Data(pending[pending.index(after: lastNewline)...])
    }
    if let lastReturn = pending.lastIndex(of: 13) {
      for part in pending[pending.startIndex..<lastReturn].split(separator: 13) where !part.isEmpty {
        stretch(String(decoding: part, as: UTF8.self))
      }
      if lastReturn != pending.index(before: pending.endIndex) {
        pending = Data(pending[pending.index(after: lastReturn)...])
      } else if let previous = pending[..<lastReturn].lastIndex(of: 13) {
        pending = Data(pending[pending.index(after: previous)...])
      }
    }
    if pending.count > Self.longest {
      lines(String(decoding: pending, as: UTF8.self) + "\n")
      pending = Data()
    }
    partial = pending
  }

  /// The stream ended: its unfinished line, ended, if there is one.
  mutating func finish() -> String? {
    guard !partial.isEmpty else { return nil }
    defer { partial = Data() }
    return Self.asShown(partial + [10])
  }

  /// Whole lines as a terminal shows them: "\r\n" ends a line like "\n", and a line
  /// overwritten with "\r" shows its last stretch.
  static func asShown<Bytes: Collection>(_ lines: Bytes) -> String where Bytes.Element == UInt8 {
    guard lines.contains(13) else { return String(decoding: lines, as: UTF8.self) }
    var text = ""
    for line in lines.split(separator: 10, omittingEmptySubsequences: false).dropLast() {
      let stretches = line.split(separator: 13, omittingEmptySubsequences: true)
      text += String(decoding: stretches.last ?? line[line.startIndex..<line.startIndex], as: UTF8.self) + "\n"
    }
    return text
  }
}
