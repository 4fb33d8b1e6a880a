// OutputLines: one stream of a command's output, cut into whole lines as a terminal shows them.
import FoundationEssentials
import Glibc

/// What a stream has written since its last whole line. Reporters get whole lines only, so
/// output of two commands never interleaves mid-line; a line overwritten with "\r" (curl,
/// wget, rsync) feeds each finished stretch to progress patterns as it comes.
///
/// Works on raw bytes (`memchr`, pointer loops): through `Data`'s collection methods every
/// byte was a dynamic exclusivity check, and output without newlines (binary, compressed)
/// went at 25-30 MB/s.
struct OutputLines {
  /// Bytes after the last whole line (and, of a line overwritten with "\r", after the last "\r").
  private(set) var partial: [UInt8] = []
  /// A line longer than this is passed on in pieces of exactly this many bytes (each ended
  /// as a line), whatever sizes the output was read in; the rest of the line (1 to `longest`
  /// bytes) ends it as usual.
  static let longest = 64 << 10

  /// Adds `data`: `lines` gets the whole lines it completes, as shown; `stretch` each
  /// finished stretch of a line being overwritten. A "\r" at the very end may be half of
  /// "\r\n": its stretch is passed on, but kept until the next byte says.
  mutating func add(_ data: Data, lines: (String) -> Void, stretch: (String) -> Void) {
    cut(
      data, whole: { lines(Self.asShown($0)) }, stretches: true, stretch: { stretch(UTF8Repair.string($0)) },
      long: { lines(UTF8Repair.string($0) + "\n") })
  }

  /// As `add`, for output nothing reads as it comes: the whole lines as the command wrote
  /// them (`asShown` makes them what `add` passes on), and no stretches. Nothing is decoded.
  mutating func addBytes(_ data: Data, lines: ([UInt8]) -> Void) {
    cut(data, whole: { lines(Array($0)) }, stretches: false, stretch: { _ in }, long: { lines(Array($0) + [10]) })
  }

  /// The cut itself: `whole` gets the whole lines, `stretch` each finished stretch (with
  /// `stretches`), `long` each `longest`-byte piece of a longer line, in order.
  private mutating func cut(
    _ data: Data, whole: (UnsafeBufferPointer<UInt8>) -> Void, stretches: Bool,
    stretch: (UnsafeBufferPointer<UInt8>) -> Void, long: (UnsafeBufferPointer<UInt8>) -> Void
  ) {
    var pending = partial
    partial = []
    pending.append(contentsOf: data)
    var keepFrom = 0
    pending.withUnsafeBufferPointer { buffer in
      guard let base = buffer.baseAddress else { return }
      let count = buffer.count
      var start = 0
      if let lastNewline = Self.lastIndex(of: 10, in: base, 0..<count) {
        var from = 0
        // Only a run of lines longer than `longest` can hold a long line.
        if lastNewline >= Self.longest {
          var lineStart = 0
          while lineStart <= lastNewline {
            // A newline in the next `longest + 1` bytes: no line there is long (one look per
            // window, found at once in short lines, not one per line).
            let limit = min(lineStart + Self.longest + 1, lastNewline + 1)
            guard let newline = Self.lastIndex(of: 10, in: base, lineStart..<limit) else {
              // A long line: the whole lines before it, then its pieces; its rest stays in the run.
              let end = Self.firstIndex(of: 10, in: base, limit..<(lastNewline + 1)) ?? lastNewline
              if lineStart > from { whole(UnsafeBufferPointer(start: base + from, count: lineStart - from)) }
              from = Self.pieces(base, lineStart..<end, long)
              lineStart = end + 1
              continue
            }
            lineStart = newline + 1
          }
        }
        whole(UnsafeBufferPointer(start: base + from, count: lastNewline + 1 - from))
        start = lastNewline + 1
      }
      // The unfinished line's long stretches go as pieces now, as they would byte by byte.
      let cutFrom = Self.pieces(base, start..<count, long)
      if let lastReturn = Self.lastIndex(of: 13, in: base, start..<count) {
        // Each finished stretch, in order.
        var from = start
        while stretches && from < lastReturn {
          let end = Self.firstIndex(of: 13, in: base, from..<lastReturn) ?? lastReturn
          if end > from { stretch(UnsafeBufferPointer(start: base + from, count: end - from)) }
          from = end + 1
        }
        if lastReturn != count - 1 {
          start = lastReturn + 1
        } else if let previous = Self.lastIndex(of: 13, in: base, start..<lastReturn) {
          start = previous + 1
        }
      }
      keepFrom = max(start, cutFrom)
    }
    if keepFrom < pending.count {
      if keepFrom > 0 { pending.removeFirst(keepFrom) }
      partial = pending
    }
  }

  /// Passes on, as `longest`-byte pieces, each stretch of `line` (a line without its end)
  /// that is longer than `longest`, the way they come when the bytes arrive one by one: a
  /// stretch (between "\r"s) is cut while more than `longest` of it is there. Returns where
  /// the rest of the line starts.
  private static func pieces(
    _ base: UnsafePointer<UInt8>, _ line: Range<Int>, _ long: (UnsafeBufferPointer<UInt8>) -> Void
  ) -> Int {
    guard line.count > longest else { return line.lowerBound }
    var rest = line.lowerBound
    var stretchStart = line.lowerBound
    while true {
      let end = firstIndex(of: 13, in: base, stretchStart..<line.upperBound) ?? line.upperBound
      while end - stretchStart > longest {
        long(UnsafeBufferPointer(start: base + stretchStart, count: longest))
        stretchStart += longest
        rest = stretchStart
      }
      if end == line.upperBound { return rest }
      stretchStart = end + 1
    }
  }

  /// The stream ended: its unfinished line, ended, if there is one.
  mutating func finish() -> String? {
    guard !partial.isEmpty else { return nil }
    defer { partial = [] }
    return Self.asShown(partial + [10])
  }

  /// Whole lines as a terminal shows them: "\r\n" ends a line like "\n", and a line
  /// overwritten with "\r" shows its last stretch.
  static func asShown<Bytes: Collection>(_ lines: Bytes) -> String where Bytes.Element == UInt8 {
    if let shown = lines.withContiguousStorageIfAvailable({ asShown($0) }) { return shown }
    return Array(lines).withUnsafeBufferPointer { asShown($0) }
  }

  static func asShown(_ lines: UnsafeBufferPointer<UInt8>) -> String {
    guard let base = lines.baseAddress, firstIndex(of: 13, in: base, 0..<lines.count) != nil else {
      return UTF8Repair.string(lines)
    }
    var shown: [UInt8] = []
    shown.reserveCapacity(lines.count)
    var start = 0
    while start < lines.count {
      let end = firstIndex(of: 10, in: base, start..<lines.count) ?? lines.count
      // The last non-empty stretch between "\r"s (or the empty line).
      var stretchEnd = end
      while stretchEnd > start && base[stretchEnd - 1] == 13 { stretchEnd -= 1 }
      let stretchStart = lastIndex(of: 13, in: base, start..<stretchEnd).map { $0 + 1 } ?? start
      shown.append(contentsOf: UnsafeBufferPointer(start: base + stretchStart, count: stretchEnd - stretchStart))
      if end < lines.count { shown.append(10) }
      start = end + 1
    }
    return shown.withUnsafeBufferPointer { UTF8Repair.string($0) }
  }

  static func firstIndex(of byte: UInt8, in base: UnsafePointer<UInt8>, _ range: Range<Int>) -> Int? {
    guard !range.isEmpty, let found = memchr(base + range.lowerBound, Int32(byte), range.count) else { return nil }
    return UnsafeRawPointer(found) - UnsafeRawPointer(base)
  }

  static func lastIndex(of byte: UInt8, in base: UnsafePointer<UInt8>, _ range: Range<Int>) -> Int? {
    var i = range.upperBound
    while i > range.lowerBound {  // memrchr is a GNU extension Glibc's module does not show
      i -= 1
      if base[i] == byte { return i }
    }
    return nil
  }
}
