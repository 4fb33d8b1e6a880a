// SpillFolder: the private folder that holds command output past --output-limit, made and removed safely.
import FoundationEssentials
import Glibc

/// Where a stream past `OutputLimits.memory` goes: one folder per process, made by
/// `mkdtemp` under `$TMPDIR` (mode 0700, a fresh name: nothing planted there is followed or
/// reused), files created in it with `O_EXCL | O_NOFOLLOW` and mode 0600. A file stays after
/// the run only when a failure message shown to the user names it (`keepNamed`); every other
/// one is removed as soon as its command is done with (`discard`) or at exit
/// (`removeUnkept`, on every way out), and the folder with them when it is left empty. A
/// result handed to Lua names its file while the run lasts.
///
/// The files of a run together hold at most `OutputLimits.total` bytes: each reserves its bytes
/// before writing them (`reserve`), and gives them back when it is removed.
///
/// Used from the scheduler's thread, and at exit from whichever thread ends the process:
/// its state is behind a lock.
public final class SpillFolder: @unchecked Sendable {
  public static let shared = SpillFolder()

  private let lock = Lock()
  /// The folder's path and descriptor once made; `failure` once making it failed (not retried).
  private var path: String?
  private var descriptor: Int32 = -1
  private var failure: String?
  /// Files made and not yet removed, by path: whether a failure message names them, and the
  /// bytes they reserved.
  private var files: [String: (kept: Bool, bytes: Int)] = [:]
  /// Bytes all files reserved together.
  private var reserved = 0
  private var warned = false

  /// Creates `name` (or `name` with a number added, if a file of that name was made before)
  /// for writing; the descriptor and its path, or why it could not be made.
  /// The file first reserves `bytes` of the run's `total` (`OutputLimits.total`); when they
  /// are not left, nothing is made.
  func create(_ name: String, reserving bytes: Int, within total: Int) -> Result<(fd: Int32, path: String), SpillError>
  {
    lock.lock(); defer { lock.unlock() }
    guard reserved + bytes <= total else { return .failure(totalReached(total)) }
    if descriptor < 0 && failure == nil { makeFolder() }
    guard descriptor >= 0, let path else { return .failure(SpillError(message: failure ?? "no folder")) }
    let (stem, dot) = name.lastIndex(of: ".").map { (String(name[..<$0]), String(name[$0...])) } ?? (name, "")
    for attempt in 1...100 {
      let file = attempt == 1 ? name : "\(stem)-\(attempt)\(dot)"
      let fd = openat(descriptor, file, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
      if fd >= 0 {
        files[path + "/" + file] = (false, bytes)
        reserved += bytes
        return .success((fd, path + "/" + file))
      }
      if errno != EEXIST {
        return .failure(SpillError(message: "\(path)/\(file): \(String(cString: strerror(errno)))"))
      }
    }
    return .failure(SpillError(message: "\(path)/\(name): too many files of that name"))
  }

  /// Up to `bytes` more for `file`, within the run's `total`: how many it may write.
  func reserve(_ bytes: Int, for file: String, within total: Int) -> Int {
    lock.lock(); defer { lock.unlock() }
    guard let entry = files[file] else { return 0 }
    let granted = max(0, min(bytes, total - reserved))
    files[file] = (entry.kept, entry.bytes + granted)
    reserved += granted
    return granted
  }

  /// Why a stream gets no more room on disk: the run's files reached `total` bytes.
  func totalReached(_ total: Int) -> SpillError {
    SpillError(
      message: "this run's output files reached \(total >> 20) MB, "
        + "4 × --output-file-limit, the most they may hold together",
      advice: "A larger --output-file-limit keeps more")
  }

  /// A failure message the user is shown: every file it names stays after the run.
  public func keepNamed(in message: String) {
    lock.lock(); defer { lock.unlock() }
    guard let path, message.contains(path) else { return }
    for (file, entry) in files where !entry.kept && message.contains(file) { files[file] = (true, entry.bytes) }
  }

  /// Nothing will name `file`: removed now, unless a failure message already named it.
  public func discard(_ file: String?) {
    guard let file else { return }
    lock.lock(); defer { lock.unlock() }
    guard let entry = files[file], !entry.kept else { return }
    remove(file, entry.bytes)
  }

  /// At exit (every way out): every file no failure message names is removed, and the folder
  /// if that leaves it empty.
  public func removeUnkept() {
    lock.lock(); defer { lock.unlock() }
    guard descriptor >= 0, let path else { return }
    for (file, entry) in files where !entry.kept { remove(file, entry.bytes) }
    if files.isEmpty {
      rmdir(path)
      close(descriptor)
      (descriptor, self.path) = (-1, nil)
    }
  }

  private func remove(_ file: String, _ bytes: Int) {
    files[file] = nil
    reserved -= bytes
    unlinkat(descriptor, String(file.split(separator: "/").last ?? ""), 0)
  }

  /// A one-time warning on standard error that output past the memory limit could not be
  /// kept in a file (the memory bound holds anyway: only the stream's end is kept).
  func warnOnce(_ problem: SpillError) {
    lock.lock()
    let first = !warned
    warned = true
    lock.unlock()
    guard first else { return }
    writeStandardError(
      "taskrun: warning: cannot keep command output past --output-limit in a file "
        + "(\(problem.message)); only the last \(ProcessRunner.tailBytes >> 10) KiB of such a stream is kept. "
        + problem.advice + "\n")
  }

  /// `mkdtemp` under TMPDIR (else /tmp); never creates TMPDIR itself.
  private func makeFolder() {
    var base = ProcessInfo.processInfo.environment["TMPDIR"] ?? ""
    if base.isEmpty { base = "/tmp" }
    while base.count > 1 && base.hasSuffix("/") { base.removeLast() }
    var template = Array((base + "/taskrun-" + String(repeating: "X", count: 6)).utf8CString)  // mkdtemp's six Xs
    let made = template.withUnsafeMutableBufferPointer { mkdtemp($0.baseAddress!) }
    guard made != nil else {
      failure = "TMPDIR '\(base)': \(String(cString: strerror(errno)))"
      return
    }
    let folder = template.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
    let fd = open(folder, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
    guard fd >= 0 else {
      failure = "\(folder): \(String(cString: strerror(errno)))"
      rmdir(folder)
      return
    }
    (path, descriptor) = (folder, fd)
  }
}

/// Why output could not go to a file.
struct SpillError: Error {
  var message: String
  var advice = "Set TMPDIR to a writable folder with room to keep all of it"
}
