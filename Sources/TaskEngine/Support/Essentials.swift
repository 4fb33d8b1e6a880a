// Essentials: the few things taskrun took from Foundation beyond FoundationEssentials.
import FoundationEssentials
import Glibc

// taskrun links FoundationEssentials, not Foundation: the whole of swift-corelibs-foundation
// (CoreFoundation, ICU) made the binary 76 MB, with 77,000 relocations at every start and a
// conformance table a third longer to scan.

extension StringProtocol {
  /// Without the whitespace (and, unless `newlines` is false, line ends) at either end: what
  /// Foundation's `trimmingCharacters(in: .whitespacesAndNewlines)` (`.whitespaces`) gives.
  public func trimmed(newlines: Bool = true) -> String {
    trimming { $0.isWhitespace && (newlines || !$0.isNewline) }
  }

  /// Without the line ends at either end (Foundation's `trimmingCharacters(in: .newlines)`).
  public var trimmingNewlines: String { trimming(\.isNewline) }

  private func trimming(_ drop: (Character) -> Bool) -> String {
    guard let first = firstIndex(where: { !drop($0) }), let last = lastIndex(where: { !drop($0) }) else { return "" }
    return String(self[first...last])
  }
}

/// A mutex for state shared with another thread (NSLock's lock and unlock).
public final class Lock: @unchecked Sendable {
  private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)

  public init() { pthread_mutex_init(mutex, nil) }
  deinit {
    pthread_mutex_destroy(mutex)
    mutex.deallocate()
  }

  public func lock() { pthread_mutex_lock(mutex) }
  public func unlock() { pthread_mutex_unlock(mutex) }
}

/// printf's formatting of `arguments` (at most 255 bytes), as Foundation's String(format:).
public func cFormat(_ format: String, _ arguments: CVarArg...) -> String {
  var buffer = [CChar](repeating: 0, count: 256)
  _ = withVaList(arguments) { vsnprintf(&buffer, buffer.count, format, $0) }
  return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
}

/// The folder for temporary files: $TMPDIR, else /tmp.
public var temporaryDirectory: String {
  let folder = Environment.variable("TMPDIR").flatMap { $0.isEmpty ? nil : $0 } ?? "/tmp"
  return folder.hasSuffix("/") ? folder : folder + "/"
}

/// Writes all of `bytes` to `fd` (retrying after a signal or a short write); false on error.
/// Contiguous bytes (an array, `Data`, a native string's `utf8`) are written where they are.
@discardableResult
public func writeAll(_ fd: Int32, _ bytes: some Collection<UInt8>) -> Bool {
  func write(_ buffer: UnsafeBufferPointer<UInt8>) -> Bool {
    var done = 0
    while done < buffer.count {
      let n = Glibc.write(fd, buffer.baseAddress! + done, buffer.count - done)
      if n < 0 { if errno == EINTR { continue }; return false }
      done += n
    }
    return true
  }
  return bytes.withContiguousStorageIfAvailable(write) ?? Array(bytes).withUnsafeBufferPointer(write)
}

/// Writes `text` to standard error.
public func writeStandardError(_ text: String) { writeAll(STDERR_FILENO, text.utf8) }

/// Everything `fd` holds from where it is to its end (nil after a read error).
public func readAll(_ fd: Int32) -> [UInt8]? {
  var all: [UInt8] = []
  var chunk = [UInt8](repeating: 0, count: 65536)
  while true {
    let n = read(fd, &chunk, chunk.count)
    if n < 0 { if errno == EINTR { continue }; return nil }
    if n == 0 { return all }
    all.append(contentsOf: chunk[..<n])
  }
}
