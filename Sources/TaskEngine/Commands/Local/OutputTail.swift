// OutputTail: the end of an operation's output kept for its failure report, and how many lines came before it.

/// The last whole lines of what an operation's commands printed, about `ProcessRunner.tailBytes`
/// of them (at most twice that), and the number of lines dropped before them, so a report can
/// say how much it does not show.
struct OutputTail {
  /// Whole lines: text as shown, or (once `raw`) also lines as commands wrote them.
  private var kept: [UInt8] = []
  private var raw = false
  /// Whole lines dropped from the front (a line longer than the tail is kept as its end).
  private(set) var droppedLines = 0

  /// The kept lines as shown (decoded here when some came as bytes).
  var text: String {
    raw ? OutputLines.asShown(kept) : kept.withUnsafeBufferPointer { String(decoding: $0, as: UTF8.self) }
  }
  var isEmpty: Bool { kept.isEmpty }

  /// Adds output (whole lines, as the process runner posts them); past twice the tail's size
  /// the front is dropped up to a line's start, and its lines are counted.
  mutating func append(_ more: String) {
    kept.append(contentsOf: more.utf8)
    trim()
  }

  /// Adds whole lines as a command wrote them.
  mutating func append(bytes: [UInt8]) {
    kept.append(contentsOf: bytes)
    raw = true
    trim()
  }

  private mutating func trim() {
    guard kept.count > 2 * ProcessRunner.tailBytes else { return }
    var dropped = 0
    var cut = 0
    kept.withUnsafeBufferPointer { bytes in
      guard let base = bytes.baseAddress else { return }
      cut = bytes.count - ProcessRunner.tailBytes
      // Keep whole lines: the cut moves to just after the next newline, if there is one.
      if let newline = OutputLines.firstIndex(of: 10, in: base, cut..<bytes.count), newline + 1 < bytes.count {
        cut = newline + 1
      }
      var from = 0
      while let newline = OutputLines.firstIndex(of: 10, in: base, from..<cut) {
        dropped += 1
        from = newline + 1
      }
    }
    droppedLines += dropped
    kept.removeFirst(cut)
  }
}
