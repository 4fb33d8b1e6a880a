// Scratch: one folder for everything a test process writes, removed when the process exits.
import Foundation

/// Tests make their workflows, outputs and fake tools under `Scratch.root`
/// (`$TMPDIR/taskrun-tests-PID`), not loose in the temporary directory: the folder goes
/// when the test process exits, and folders of test processes that died (a crash, a
/// SIGKILL) go when the next one starts.
public enum Scratch {
  public static let root: URL = {
    let temporary = FileManager.default.temporaryDirectory
    sweep(temporary)
    let root = temporary.appendingPathComponent("taskrun-tests-\(getpid())")
    try? FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
    atexit { try? FileManager.default.removeItem(at: Scratch.root) }
    return root
  }()

  /// Writes a program a test will run (a fake tool, a script with a shebang). Not with
  /// Foundation's `write(to:atomically:)`: it opens the file without O_CLOEXEC, and a child
  /// another test starts meanwhile would hold it open for writing as long as that child
  /// runs, so that running the program would fail with ETXTBSY.
  /// A new folder under `root` (its name starts with `prefix`) holding `files`, name → text.
  public static func folder(_ prefix: String, _ files: [String: String]) throws -> URL {
    let dir = root.appendingPathComponent("\(prefix)-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
    for (name, text) in files {
      try text.write(to: dir.appendingPathComponent(name), atomically: true, encoding: .utf8)
    }
    return dir
  }

  public static func writeProgram(_ text: String, to url: URL) throws {
    let fd = open(url.path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o755)
    guard fd >= 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
    defer { close(fd) }
    let bytes = Array(text.utf8)
    guard write(fd, bytes, bytes.count) == bytes.count, fchmod(fd, 0o755) == 0 else {
      throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO)
    }
  }

  /// Removes the folders of test processes that no longer run.
  private static func sweep(_ temporary: URL) {
    let names = (try? FileManager.default.contentsOfDirectory(atPath: temporary.path)) ?? []
    for name in names where name.hasPrefix("taskrun-tests-") {
      guard let pid = pid_t(name.dropFirst("taskrun-tests-".count)), kill(pid, 0) != 0, errno == ESRCH else { continue }
      try? FileManager.default.removeItem(at: temporary.appendingPathComponent(name))
    }
  }
}
