// OutputCapture: one stream of one command, bounded in memory, and on disk past the limit.
import FoundationEssentials
import Glibc

/// One stream's bytes: in memory up to `OutputLimits.memory`; past it the stream is
/// written to a file in the `SpillFolder` and memory keeps only the last `tailBytes`. The
/// file is bounded too (`OutputLimits.file`, and the run's `OutputLimits.total`):
/// past it the file keeps the stream's beginning, a line saying how many bytes were dropped,
/// and its end. When no file can be made, a warning says so and memory still keeps only the
/// end. When writing the file fails midway (a full disk, `ulimit -f`), it keeps what it has
/// and the result says it is incomplete; a file that got nothing is removed.
final class OutputCapture {
  /// What `finish` hands over: the bytes the result holds, the file, how many bytes neither
  /// holds, and why the file is incomplete when writing it failed.
  struct Finished {
    var bytes: [UInt8]
    var path: String?
    var dropped = 0
    var incomplete: String?
  }

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
  /// Why writing the file failed (a full disk, `ulimit -f`): it keeps what it has.
  private var writeError: String?
  /// The run's files reached `OutputLimits.total`: this one keeps its beginning and end.
  private var totalReached = false
  let limits: OutputLimits

  init(limits: OutputLimits) { self.limits = limits }

  /// What a file reserves when it is made: room for the stream's end and the line before it.
  private static var endReserve: Int { ProcessRunner.tailBytes + 256 }

  func append(_ data: Data, name: @autoclosure () -> String) {
    total += data.count
    if file < 0 && !unfiled {
      if bytes.count + data.count <= limits.memory {
        bytes.append(contentsOf: data)
        return
      }
      spill(name())
    }
    if file >= 0 { writeHead(data) }
    bytes.append(contentsOf: data)
    if bytes.count > 2 * ProcessRunner.tailBytes { bytes.removeFirst(bytes.count - ProcessRunner.tailBytes) }
  }

  /// The file holds the stream's first `limits.file` bytes less the end kept for it.
  private var headLimit: Int { max(0, limits.file - ProcessRunner.tailBytes) }

  private func writeHead<Bytes: Collection<UInt8>>(_ data: Bytes) {
    guard written < headLimit, writeError == nil, !totalReached, let path else { return }
    var part = data.prefix(headLimit - written)
    let granted = SpillFolder.shared.reserve(part.count, for: path, within: limits.total)
    if granted < part.count {
      totalReached = true
      SpillFolder.shared.warnOnce(SpillFolder.shared.totalReached(limits.total))
      part = part.prefix(granted)
    }
    if put(part) { written += part.count }
  }

  /// Writes to the file; on failure records why and leaves the file holding the stream's
  /// first `written` bytes: what follows them on disk counts when it continues the stream
  /// (`continues`), and is cut off when it does not (the line about dropped bytes).
  private func put<Bytes: Collection<UInt8>>(_ data: Bytes, continues: Bool = true) -> Bool {
    guard writeError == nil else { return false }
    if writeAll(file, data) { return true }
    let problem = String(cString: strerror(errno))
    writeError = problem
    let size = Int(lseek(file, 0, SEEK_CUR))
    if continues && size >= written { written = size } else { _ = ftruncate(file, off_t(written)) }
    SpillFolder.shared.warnOnce(SpillError(message: "\(path ?? ""): \(problem)"))
    return false
  }

  private func spill(_ name: String) {
    switch SpillFolder.shared.create(name, reserving: Self.endReserve, within: limits.total) {
    case .success(let made):
      (file, path) = (made.fd, made.path)
      writeHead(bytes)
    case .failure(let problem):
      SpillFolder.shared.warnOnce(problem)
      unfiled = true
    }
  }

  /// What the result holds: all of it, or the tail when the rest is in the file (or was
  /// dropped); the file; how many bytes neither the file nor the result holds; and, when
  /// writing the file failed, why it is incomplete.
  func finish() -> Finished {
    guard file >= 0 || unfiled else { return Finished(bytes: bytes) }
    let tail = Array(bytes.suffix(ProcessRunner.tailBytes))
    guard file >= 0 else { return Finished(bytes: tail, dropped: total - tail.count) }
    defer { close(file); file = -1 }
    let unwritten = total - written
    if writeError == nil {
      if unwritten <= tail.count {
        if put(bytes.suffix(unwritten)) { return Finished(bytes: tail, path: path) }
      } else {
        let dropped = unwritten - tail.count
        let bound = totalReached ? "4 × --output-file-limit for all of this run's files" : "--output-file-limit"
        let note =
          "\n[taskrun: \(dropped) bytes dropped here: the file keeps the first \(written) "
          + "and the last \(tail.count) bytes of \(total) (\(bound))]\n"
        if put(note.utf8, continues: false) && put(tail, continues: false) {
          return Finished(bytes: tail, path: path, dropped: dropped)
        }
      }
    }
    // Writing failed: the file holds the stream's first `written` bytes (and perhaps a part
    // of what came after, cut short); one that holds nothing is removed.
    let dropped = max(0, total - written - tail.count)
    guard written > 0 else {
      SpillFolder.shared.discard(path)
      return Finished(bytes: tail, dropped: total - tail.count)
    }
    return Finished(
      bytes: tail, path: path, dropped: dropped,
      incomplete: "writing it failed (\(writeError ?? "?")): it holds only the first \(written) bytes of \(total)")
  }
}
