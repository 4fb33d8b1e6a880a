// Terminal: asking the user a yes/no question (confirm) on the controlling terminal.
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
}
