// ReportFile: the file an --events or --trace reporter writes, where a failed write is reported and remembered.
import Glibc
import Synchronization
import TaskEngine

/// A report's file, opened once in place (never replaced by a rename, so a device, a pipe or
/// a symbolic link is written, not swapped for a regular file). The first failed write is
/// reported on standard error with the reason; any failure makes the exit code 1
/// (`Taskrun.finish`): a run whose record is incomplete did not succeed as asked.
final class ReportFile {
  /// Failed report writes in this process.
  static let failures = Atomic<Int>(0)

  let path: String
  /// What the file holds, for messages: "events", "the trace".
  let what: String
  private let fd: Int32
  /// A regular file can be rewritten from its start (`replace`); anything else only appended to.
  let isRegular: Bool
  private var failed = false
  /// Whether a write (or the close) failed: what the file holds is incomplete.
  var hasFailed: Bool { failed }
  /// Closed at the run's end: what comes after (a finalizer's print) is not written, and
  /// never to whatever file reuses the descriptor.
  private var isClosed = false

  /// `path` "-" means standard error; a relative one is opened in `folder` (a run gives where
  /// taskrun started, opened before the script is looked for, which may change folder: `-C`,
  /// a taskrun.lua found in a parent). The open never waits: a FIFO that no process reads
  /// would hold taskrun in open(2), where no signal reaches it, so it is refused (ENXIO).
  init(path: String, what: String, folder: Int32 = AT_FDCWD) throws {
    self.path = path
    self.what = what
    if path == "-" {
      fd = STDERR_FILENO
    } else {
      fd = openat(folder, path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NONBLOCK, 0o644)
      guard fd >= 0 else {
        let code = errno
        if code == ENXIO {
          throw ReporterError("cannot write \(what) to '\(path)': no reader on the FIFO (start its reader first)")
        }
        throw ReporterError("cannot write \(what) to '\(path)': \(Self.reason(code))")
      }
      // Writes wait as usual (a FIFO's reader that is slow is waited for, with signals handled).
      _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK)
    }
    var info = stat()
    isRegular = fstat(fd, &info) == 0 && info.st_mode & S_IFMT == S_IFREG
  }

  /// Writes `text` after what was written.
  func append(_ text: String) {
    guard !failed, !isClosed else { return }
    if !writeAll(fd, text.utf8) { fail(errno) }
  }

  /// Makes `text` the whole file (a regular file); elsewhere appends it.
  func replace(with text: String) {
    guard !failed, !isClosed else { return }
    if isRegular && (ftruncate(fd, 0) != 0 || lseek(fd, 0, SEEK_SET) != 0) { return fail(errno) }
    append(text)
  }

  /// Closes the file; an error the kernel reports only now (a full disk over NFS) counts too.
  func close() {
    guard fd != STDERR_FILENO, !isClosed else { return }
    isClosed = true
    if Glibc.close(fd) != 0 && !failed { fail(errno) }
  }

  private func fail(_ code: Int32) {
    failed = true
    Self.failures.add(1, ordering: .sequentiallyConsistent)
    TerminalText.writeMessage(
      "taskrun: cannot write \(what) to '\(path)': \(Self.reason(code)); the file is incomplete")
  }

  private static func reason(_ code: Int32) -> String { String(cString: strerror(code)) }

  /// Whether two report paths ("-": standard error) are one file: the same path once
  /// resolved (`resolved`), or the same device and inode (hard links). The null device
  /// (`/dev/null`, by any name) is never one: it keeps nothing that two writers could mix.
  static func sameFile(_ a: String, _ b: String) -> Bool {
    if isNullDevice(a) && isNullDevice(b) { return false }
    if a == b { return true }
    if a != "-", b != "-", resolved(a) == resolved(b) { return true }
    guard let first = opened(a), let second = opened(b) else { return false }
    return first.st_dev == second.st_dev && first.st_ino == second.st_ino
  }

  /// Whether a report path opens the null device: a character device with /dev/null's
  /// device number.
  static func isNullDevice(_ path: String) -> Bool {
    guard let info = opened(path), info.st_mode & S_IFMT == S_IFCHR, let null = opened("/dev/null") else {
      return false
    }
    return null.st_mode & S_IFMT == S_IFCHR && info.st_rdev == null.st_rdev
  }

  /// What a report path opens, links followed: for "-" the file descriptor 2 holds (not the
  /// name /dev/stderr, which need not lead there), so `-` and `/proc/self/fd/2` meet.
  static func opened(_ path: String) -> stat? {
    var info = stat()
    let found = path == "-" ? fstat(STDERR_FILENO, &info) : stat(path, &info)
    return found == 0 ? info : nil
  }

  /// `path` from the root as the kernel would follow it: every symbolic link followed, also
  /// one whose target does not exist yet (opening it creates the target), and `..` taken
  /// after the link it follows. A name that is not (yet) there is kept as written; after 40
  /// links (ELOOP for the kernel) the rest is kept as it reads.
  static func resolved(_ path: String) -> String {
    var folder = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
    let start = path.hasPrefix("/") ? "" : (getcwd(&folder, folder.count).map { String(cString: $0) } ?? "")
    var left = Array((start + "/" + path).split(separator: "/").map(String.init).reversed())
    var parts: [String] = []
    var links = 0
    var target = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
    while let part = left.popLast() {
      if part == "." { continue }
      if part == ".." { _ = parts.popLast(); continue }
      let candidate = "/" + (parts + [part]).joined(separator: "/")
      let length = links < 40 ? readlink(candidate, &target, target.count - 1) : -1
      guard length > 0 else { parts.append(part); continue }
      links += 1
      let text = String(decoding: target[..<length].map { UInt8(bitPattern: $0) }, as: UTF8.self)
      if text.hasPrefix("/") { parts = [] }
      left += text.split(separator: "/").map(String.init).reversed()
    }
    return "/" + parts.joined(separator: "/")
  }
}
