// Depfile: the prerequisites a Makefile-style dependency file names (`gcc -MD`), as ninja's `deps` reads them.

enum Depfile {
  /// Largest depfile read (a bigger one is ignored with the reason).
  static let maxBytes = 16 << 20

  /// The prerequisites of every rule in `text` (`out.o: a.c a.h \` …), in order, without
  /// repeats (`gcc -MP`'s empty rule per header adds none).
  /// Backslash-newline continues a line, `\ ` and `\#` escape, `$$` is `$`; `#` starts a comment.
  static func prerequisites(_ text: [UInt8]) -> [String] {
    var found: [String] = []
    var seen = Set<String>()
    var word: [UInt8] = []
    var inTargets = true
    func endWord() {
      guard !word.isEmpty else { return }
      let text = String(decoding: word, as: UTF8.self)
      word.removeAll(keepingCapacity: true)
      if !inTargets, seen.insert(text).inserted {
        found.append(text)
      }
    }
    var i = 0
    let n = text.count
    while i < n {
      let c = text[i]
      switch c {
      case UInt8(ascii: "\\") where i + 1 < n:
        let next = text[i + 1]
        if next == UInt8(ascii: "\n") {
          endWord()
          i += 2
          continue
        }
        if next == UInt8(ascii: "\r"), i + 2 < n, text[i + 2] == UInt8(ascii: "\n") {
          endWord()
          i += 3
          continue
        }
        if next == UInt8(ascii: " ") || next == UInt8(ascii: "#") || next == UInt8(ascii: "\\") {
          word.append(next)
          i += 2
          continue
        }
        word.append(c)
      case UInt8(ascii: "$") where i + 1 < n && text[i + 1] == UInt8(ascii: "$"):
        word.append(c)
        i += 2
        continue
      case UInt8(ascii: ":") where inTargets && (i + 1 == n || isSpace(text[i + 1])):
        endWord()
        inTargets = false
      case UInt8(ascii: "#"):
        endWord()
        while i < n && text[i] != UInt8(ascii: "\n") { i += 1 }
        continue
      case UInt8(ascii: "\n"):
        endWord()
        inTargets = true
      case UInt8(ascii: " "), UInt8(ascii: "\t"), UInt8(ascii: "\r"):
        endWord()
      default:
        word.append(c)
      }
      i += 1
    }
    endWord()
    return found
  }

  private static func isSpace(_ c: UInt8) -> Bool {
    c == UInt8(ascii: " ") || c == UInt8(ascii: "\t") || c == UInt8(ascii: "\n") || c == UInt8(ascii: "\r")
  }
}
