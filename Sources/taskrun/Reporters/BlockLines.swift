// BlockLines: one operation's output held for its block, at most --output-limit bytes of it.

/// The lines an operation printed, held until its block is printed: the last `limit` bytes of
/// them (`--output-limit`, as a command's kept output), and how many lines were dropped
/// before those, which the block says.
struct BlockLines {
  private var lines: [String] = []
  /// Lines before it are dropped (removed in bulk when they are half of the array).
  private var first = 0
  private var bytes = 0
  private(set) var dropped = 0
  let limit: Int

  init(limit: Int) { self.limit = limit }

  var isEmpty: Bool { first == lines.count && dropped == 0 }
  var kept: ArraySlice<String> { lines[first...] }

  /// Adds the whole lines of `text` (output as events carry it: lines that end in "\n").
  mutating func add(output text: String) {
    for line in text.split(separator: "\n", omittingEmptySubsequences: false).dropLast() { add(line: String(line)) }
  }

  /// Adds one line (without its newline); past the limit the oldest go.
  mutating func add(line: String) {
    lines.append(line)
    bytes += line.utf8.count + 1
    while bytes > limit && first < lines.count - 1 {
      bytes -= lines[first].utf8.count + 1
      first += 1
      dropped += 1
    }
    if first > 1024 && first * 2 > lines.count {
      lines.removeFirst(first)
      first = 0
    }
  }
}
