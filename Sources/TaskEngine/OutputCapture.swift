// OutputCapture: one stream of one command, bounded in memory, whole in a file past the limit.
import Foundation

/// One stream's bytes: in memory up to `ProcessRunner.memoryLimit`; past it everything is written to a
/// file and memory keeps only the last `tailBytes`.
final class OutputCapture {
  var bytes: [UInt8] = []
  var file: FileHandle?
  var path: String?

  func append(_ data: Data, name: @autoclosure () -> String) {
    if file == nil && bytes.count + data.count > ProcessRunner.memoryLimit { spill(name()) }
    if let file {
      try? file.write(contentsOf: data)
      bytes.append(contentsOf: data)
      if bytes.count > 2 * ProcessRunner.tailBytes { bytes.removeFirst(bytes.count - ProcessRunner.tailBytes) }
    } else {
      bytes.append(contentsOf: data)
    }
  }

  private func spill(_ name: String) {
    let directory = ProcessRunner.spillDirectory
    try? FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    let path = directory + "/" + name
    guard FileManager.default.createFile(atPath: path, contents: Data(bytes)),
          let handle = FileHandle(forWritingAtPath: path) else { return }  // then it stays in memory
    handle.seekToEndOfFile()
    file = handle
    self.path = path
  }

  /// What the result holds: all of it, or the tail when the whole is in the file.
  func finish() -> (bytes: [UInt8], path: String?) {
    try? file?.close()
    return (path == nil ? bytes : Array(bytes.suffix(ProcessRunner.tailBytes)), path)
  }
}
