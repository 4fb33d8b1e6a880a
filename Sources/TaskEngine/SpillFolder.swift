// SpillFolder: the private folder that holds command output past --output-limit, made and removed safely.
import FoundationEssentials
import Glibc

/// Where a stream past `ProcessRunner.memoryLimit` goes: one folder per process, made by
/// `mkdtemp` under `$TMPDIR` (mode 0700, a fresh name: nothing planted there is followed or
/// reused), files created in it with `O_EXCL | O_NOFOLLOW` and mode 0600. Files that a
/// result handed to Lua or a failure message names are kept after the run; every other one
/// is removed as soon as its command is done with (`discard`) or at exit (`removeUnkept`),
/// and the folder with them when it is left empty.
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
  /// Files made and not yet removed, by path: whether something points at them.
  private var files: [String: Bool] = [:]
  private var warned = false

  /// Creates `name` (or `name` with a number added, if a file of that name was made before)
  /// for writing; the descriptor and its path, or why it could not be made.
  func create(_ name: String) -> Result<(fd: Int32, path: String), SpillError> {
    lock.lock(); defer { lock.unlock() }
    if descriptor < 0 && failure == nil { makeFolder() }
    guard descriptor >= 0, let path else { return .failure(SpillError(message: failure ?? "no folder")) }
    let (stem, dot) = name.lastIndex(of: ".").map { (String(name[..<$0]), String(name[$0...])) } ?? (name, "")
    for attempt in 1...100 {
      let file = attempt == 1 ? name : "\(stem)-\(attempt)\(dot)"
      let fd = openat(descriptor, file, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
      if fd >= 0 {
        files[path + "/" + file] = false
        return .success((fd, path + "/" + file))
      }
      if errno != EEXIST { return .failure(SpillError(message: "\(path)/\(file): \(String(cString: strerror(errno)))")) }
    }
    return .failure(SpillError(message: "\(path)/\(name): too many files of that name"))
  }

  /// Something the user sees names `file` (a result's `stdout_file`, a failure's message):
  /// it stays after the run.
  public func keep(_ file: String?) {
    guard let file else { return }
    lock.lock(); defer { lock.unlock() }
    if files[file] != nil { files[file] = true }
  }

  /// Nothing will name `file`: removed now, unless something already named it.
  public func discard(_ file: String?) {
    guard let file else { return }
    lock.lock(); defer { lock.unlock() }
    guard files[file] == false else { return }
    files[file] = nil
    unlinkat(descriptor, String(file.split(separator: "/").last ?? ""), 0)
  }

  /// At exit: every file nothing names is removed, and the folder if that leaves it empty.
  public func removeUnkept() {
    lock.lock(); defer { lock.unlock() }
    guard descriptor >= 0, let path else { return }
    for (file, kept) in files where !kept {
      unlinkat(descriptor, String(file.split(separator: "/").last ?? ""), 0)
      files[file] = nil
    }
    if files.isEmpty {
      rmdir(path)
      close(descriptor)
      (descriptor, self.path) = (-1, nil)
    }
  }

  /// A one-time warning on standard error that output past the memory limit could not be
  /// kept in a file (the memory bound holds anyway: only the stream's end is kept).
  func warnOnce(_ problem: SpillError) {
    lock.lock()
    let first = !warned
    warned = true
    lock.unlock()
    guard first else { return }
    writeStandardError("taskrun: warning: cannot keep command output past --output-limit in a file "
      + "(\(problem.message)); only the last \(ProcessRunner.tailBytes >> 10) KiB of such a stream is kept. "
      + "Set TMPDIR to a writable folder to keep all of it\n")
  }

  /// `mkdtemp` under TMPDIR (else /tmp); never creates TMPDIR itself.
  private func makeFolder() {
    var base = ProcessInfo.processInfo.environment["TMPDIR"] ?? ""
    if base.isEmpty { base = "/tmp" }
    while base.count > 1 && base.hasSuffix("/") { base.removeLast() }
    var template = Array((base + "/taskrun-XXXXXX").utf8CString)
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
}
