// Terminal: asking the user a yes/no question (confirm) on the controlling terminal.
import Foundation

enum Terminal {
  /// Writes `prompt [y/N] ` to the terminal and reads the answer; nil if it cannot ask.
  @Sendable static func ask(_ prompt: String) -> Bool? {
    guard let tty = FileHandle(forUpdatingAtPath: "/dev/tty") else { return nil }
    defer { try? tty.close() }
    tty.write(Data("\(prompt) [y/N] ".utf8))
    var line = Data()
    while true {
      guard let byte = try? tty.read(upToCount: 1), let first = byte.first else { break }
      if first == 10 { break }
      line.append(first)
    }
    let answer = String(decoding: line, as: UTF8.self).trimmingCharacters(in: .whitespaces).lowercased()
    return answer == "y" || answer == "yes"
  }
}
