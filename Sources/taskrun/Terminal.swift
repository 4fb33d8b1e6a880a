// Terminal: asking the user a yes/no question (confirm) or a choice (choose) on the controlling terminal.
import FoundationEssentials
import Glibc
import TaskEngine

enum Terminal {
  /// Writes `prompt [y/N] ` to the terminal and reads the answer; nil if it cannot ask.
  @Sendable static func ask(_ prompt: String) -> Bool? {
    let tty = open("/dev/tty", O_RDWR | O_CLOEXEC)
    guard tty >= 0 else { return nil }
    defer { close(tty) }
    writeAll(tty, "\(prompt) [y/N] ".utf8)
    var line: [UInt8] = []
    var byte: UInt8 = 0
    while true {
      let n = read(tty, &byte, 1)
      if n < 0 && errno == EINTR { continue }
      if n != 1 || byte == 10 { break }
      line.append(byte)
    }
    let answer = String(decoding: line, as: UTF8.self).trimmed(newlines: false).lowercased()
    return answer == "y" || answer == "yes"
  }

  /// Writes the question and its numbered choices to the terminal and reads a number or a
  /// choice's name (an empty line takes the default); asks again, at most three times, after
  /// an answer that names none. Nil if it cannot ask or gets no answer.
  @Sendable static func choose(_ question: Question) -> String? {
    let tty = open("/dev/tty", O_RDWR | O_CLOEXEC)
    guard tty >= 0 else { return nil }
    defer { close(tty) }
    var text = question.text + "\n"
    for (i, choice) in question.choices.enumerated() { text += "  \(i + 1)) \(choice)\n" }
    let range = "1-\(question.choices.count)"
    text += question.defaultChoice.map { "Choose \(range) [\($0)]: " } ?? "Choose \(range): "
    writeAll(tty, text.utf8)
    for _ in 0..<3 {
      guard let line = readLine(tty) else { break }
      if line.trimmed(newlines: false).isEmpty, let choice = question.defaultChoice { return choice }
      if let choice = question.choice(named: line) { return choice }
      writeAll(tty, "Answer \(range) or a choice's name: ".utf8)
    }
    writeAll(tty, "\n".utf8)  // no answer: what follows starts on a line of its own
    return nil
  }

  /// A line from `tty` without its newline; nil at its end.
  private static func readLine(_ tty: Int32) -> String? {
    var line: [UInt8] = []
    var byte: UInt8 = 0
    while true {
      let n = read(tty, &byte, 1)
      if n < 0 && errno == EINTR { continue }
      if n != 1 { return line.isEmpty ? nil : String(decoding: line, as: UTF8.self) }
      if byte == 10 { return String(decoding: line, as: UTF8.self) }
      line.append(byte)
    }
  }
}
