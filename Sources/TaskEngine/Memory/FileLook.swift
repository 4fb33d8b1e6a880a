// FileLook: what a file is now (its stat, and its content hash unless the stat says it is unchanged).
import CXXHash
import Glibc

/// A 128-bit XXH3 hash.
public struct Digest: Hashable, Sendable {
  public var high: UInt64, low: UInt64
  public static let zero = Digest(high: 0, low: 0)

  /// The first 64 bits in hex.
  public var short: String {
    let text = String(high, radix: 16)
    return String(repeating: "0", count: max(0, 16 - text.count)) + text
  }
  /// All 128 bits in hex.
  public var hex: String {
    let low = String(self.low, radix: 16)
    return short + String(repeating: "0", count: max(0, 16 - low.count)) + low
  }
  /// The XXH3-128 of bytes.
  public static func of(_ bytes: [UInt8]) -> Digest { FileLook.hash(bytes) }
}

/// One file as it was last seen: the stat fields that change when it is written, and its
/// content hash. `trusted`: it had not been written for a while when it was hashed, so an
/// equal stat later means equal contents (a file written within the clock's granularity of
/// the hash is hashed again, as git treats "racily clean" entries).
public struct FileRecord: Equatable, Sendable {
  public var path: String
  public var size: Int64
  public var mtime: Int64
  public var inode: UInt64
  public var digest: Digest
  public var trusted: Bool

  func sameStat(_ info: stat) -> Bool {
    size == Int64(info.st_size) && inode == UInt64(info.st_ino) && mtime == FileLook.nanoseconds(info.st_mtim)
  }
}

/// Looks at files and hashes their contents, keeping one hash state for the run.
final class FileLook {
  private let state: OpaquePointer
  private var buffer = [UInt8](repeating: 0, count: 1 << 16)
  /// Files hashed (not taken from a trusted stat), for the tests and the benchmarks.
  private(set) var hashed = 0

  init() { state = XXH3_createState()! }
  deinit { XXH3_freeState(state) }

  static func nanoseconds(_ t: timespec) -> Int64 { Int64(t.tv_sec) &* 1_000_000_000 &+ Int64(t.tv_nsec) }

  /// Wall-clock nanoseconds now (file times are on this clock).
  static func wallNow() -> Int64 {
    var now = timespec()
    clock_gettime(CLOCK_REALTIME, &now)
    return nanoseconds(now)
  }

  /// A file written less than this long before it was hashed is hashed again next time.
  static let racyWindow: Int64 = 2_000_000_000

  /// The file at `path` now (following links), or nil when there is none or it is not a
  /// regular file one can read. `previous`: what was recorded for it; its hash is reused when
  /// the stat is the same and it was trusted.
  func look(_ path: String, previous: FileRecord?) -> FileRecord? {
    var info = stat()
    guard stat(path, &info) == 0, info.st_mode & S_IFMT == S_IFREG else { return nil }
    if let previous, previous.trusted, previous.sameStat(info) { return previous }
    guard let digest = hash(path) else { return nil }
    let mtime = Self.nanoseconds(info.st_mtim)
    return FileRecord(
      path: path, size: Int64(info.st_size), mtime: mtime, inode: UInt64(info.st_ino), digest: digest,
      trusted: mtime < Self.wallNow() - Self.racyWindow)
  }

  /// Whether a file is at `path` (following links) with the stat `record` has.
  func unchanged(_ record: FileRecord) -> Bool {
    var info = stat()
    return stat(record.path, &info) == 0 && record.sameStat(info)
  }

  /// The XXH3-128 of the file's contents, or nil when it cannot be read. At most the size
  /// its stat gave is read: a file of /proc (size 0, endless) cannot hold the run, and one
  /// that grows while it is hashed is hashed as it was.
  func hash(_ path: String) -> Digest? {
    let fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK)
    guard fd >= 0 else { return nil }
    defer { close(fd) }
    var info = stat()
    guard fstat(fd, &info) == 0, info.st_mode & S_IFMT == S_IFREG else { return nil }
    var left = Int(info.st_size)
    hashed += 1
    XXH3_128bits_reset(state)
    while left > 0 {
      let count = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, min($0.count, left)) }
      if count < 0 {
        if errno == EINTR { continue }
        return nil
      }
      if count == 0 { break }
      left -= count
      buffer.withUnsafeBytes { _ = XXH3_128bits_update(state, $0.baseAddress, count) }
    }
    let value = XXH3_128bits_digest(state)
    return Digest(high: value.high64, low: value.low64)
  }

  /// The XXH3-128 of bytes (identities, fingerprints).
  static func hash(_ bytes: [UInt8]) -> Digest {
    let value = bytes.withUnsafeBytes { XXH3_128bits($0.baseAddress, $0.count) }
    return Digest(high: value.high64, low: value.low64)
  }
}
