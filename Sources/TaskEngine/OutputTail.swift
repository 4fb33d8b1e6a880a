// OutputTail: the end of an operation's output kept for its failure report, and how many lines came before it.

/// The last whole lines of what an operation's commands printed, about `ProcessRunner.tailBytes`
/// of them (at most twice that), and the number of lines dropped before them, so a report can
/// say how much it does not show.
struct OutputTail {
  private(set) var text = ""
  /// Whole lines dropped from the front (a line longer than the tail is kept as its end).
  private(set) var droppedLines = 0

  /// Adds output (whole lines, as the process runner posts them); past twice the tail's size
  /// the front is dropped up to a line's start, and its lines are counted.
  mutating func append(_ more: String) {
    text += more
    let bytes = text.utf8
    guard bytes.count > 2 * ProcessRunner.tailBytes else { return }
    var cut = bytes.index(bytes.endIndex, offsetBy: -ProcessRunner.tailBytes)
    // Keep whole lines: the cut moves to just after the next newline, if there is one.
    if let newline = bytes[cut...].firstIndex(of: 10), bytes.index(after: newline) < bytes.endIndex {
      cut = bytes.index(after: newline)
    }
    var dropped = 0
    for byte in bytes[..<cut] where byte == 10 { dropped += 1 }
    droppedLines += dropped
    text = String(decoding: bytes[cut...], as: UTF8.self)
  }
}
