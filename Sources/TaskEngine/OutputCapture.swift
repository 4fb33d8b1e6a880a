// OutputCapture: one stream of one command, bounded in memory, and on disk past the limit.
import FoundationEssentials
import Glibc

/// One stream's bytes: in memory up to `ProcessRunner.memoryLimit`; past it the stream is
/// written to a file in the `SpillFolder` and memory keeps only the last `tailBytes`. The
/// file is bounded too (`ProcessRunner.fileLimit`): past it the file keeps the stream's
/// beginning, a line saying how many bytes were dropped, and its end. When no file can be
/// made, a warning says so and memory still keeps only the end.
final class OutputCapture {
  /// The whole stream while it fits in memory; past that, its most recent bytes.
  var bytes: [UInt8] = []
  /// The file's descriptor once spilled, else -1.
  var file: Int32 = -1
  var path: String?
  /// Bytes the stream has produced, and how many of the first of them the file holds.
  private var total = 0
  private var written = 0
  /// Past the memory limit without a file: memory keeps the end only.
  private var unfiled = false
  /// Writing the file failed (a full disk): it keeps what it has.
  private var writeFailed = false

  func append(_ data: Data, name: @autoclosure () -> String) {
    total += data.count
    if file < 0 && !unfiled {
      if bytes.count + data.count <= ProcessRunner.memoryLimit {
        bytes.append(contentsOf: data)
        return
      }
      spill(name())
    }
    if file >= 0 { writeHead(data) }
    bytes.append(contentsOf: data)
    if bytes.count > 2 * ProcessRunner.tailBytes { bytes.removeFirst(bytes.count - ProcessRunner.tailBytes) }
  }

  /// The file holds the stream's first `fileLimit` bytes less the end kept for it.
  private var headLimit: Int { max(0, ProcessRunner.fileLimit - ProcessRunner.tailBytes) }

  private func writeHead<Bytes: Collection<UInt8>>(_ data: Bytes) {
    guard written < headLimit, !writeFailed else { return }
    let part = data.prefix(headLimit - written)
    if writeAll(file, part) {
      written += part.count
    } else {
      SpillFolder.shared.warnOnce(SpillError(message: "\(path ?? ""): \(String(cString: strerror(errno)))"))
      writeFailed = true
    }
  }

  private func spill(_ name: String) {
    switch SpillFolder.shared.create(name) {
    case .success(let made):
      (file, path) = (made.fd, made.path)
      writeHead(bytes)
    case .failure(let problem):
      SpillFolder.shared.warnOnce(problem)
      unfiled = true
    }
  }

  /// What the result holds: all of it, or the tail when the rest is in the file (or was
  /// dropped); the file; and how many bytes neither the file nor the result holds.
  func finish() -> (bytes: [UInt8], path: String?, dropped: Int) {
    guard file >= 0 || unfiled else { return (bytes, nil, 0) }
    let tail = Array(bytes.suffix(ProcessRunner.tailBytes))
    guard file >= 0 else { return (tail, nil, total - tail.count) }
    defer { close(file); file = -1 }
    let unwritten = total - written
    if unwritten <= tail.count && !writeFailed {
      _ = writeAll(file, bytes.suffix(unwritten))
      return (tail, path, 0)
    }
    let dropped = unwritten - tail.count
    let note = "\n[taskrun: \(dropped) bytes dropped here: the file keeps the first \(written) "
      + "and the last \(tail.count) bytes of \(total) (--output-file-limit)]\n"
    _ = writeAll(file, note.utf8)
    _ = writeAll(file, tail)
    return (tail, path, dropped)
  }
}
