// OutputCapture: one stream of one command, bounded in memory, whole in a file past the limit.
import FoundationEssentials
import Glibc

/// One stream's bytes: in memory up to `ProcessRunner.memoryLimit`; past it everything is written to a
/// file and memory keeps only the last `tailBytes`.
final class OutputCapture {
  var bytes: [UInt8] = []
  /// The file's descriptor once spilled, else -1.
  var file: Int32 = -1
  var path: String?

  func append(_ data: Data, name: @autoclosure () -> String) {
    if file < 0 && bytes.count + data.count > ProcessRunner.memoryLimit { spill(name()) }
    if file >= 0 {
      writeAll(file, data)
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
    let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
    guard fd >= 0 else { return }  // then it stays in memory
    guard writeAll(fd, bytes) else { close(fd); unlink(path); return }
    file = fd
    self.path = path
  }

  /// What the result holds: all of it, or the tail when the whole is in the file.
  func finish() -> (bytes: [UInt8], path: String?) {
    if file >= 0 { close(file); file = -1 }
    return (path == nil ? bytes : Array(bytes.suffix(ProcessRunner.tailBytes)), path)
  }
}
