// Test support: start a program with posix_spawn and reap it with waitpid.
//
// Not Foundation's Process: on Linux it learns of exits through a SIGCHLD dispatch source,
// and a SIGCHLD taken by another thread of the test process left `isRunning` true forever
// (a zombie tmux client hung CI). waitpid on the child's own pid cannot miss it.
import Foundation
import TestSupport

/// A started program whose standard streams are files.
struct Child {
  let pid: pid_t

  /// Runs `argv` (searched in PATH) in `directory`, stdin/stdout/stderr from/to the given paths.
  init(
    _ argv: [String], in directory: URL? = nil, environment: [String: String]? = nil,
    stdin: String = "/dev/null", stdout: String = "/dev/null", stderr: String = "/dev/null"
  ) throws {
    // The shell changes directory, then becomes the program (same pid).
    let command = directory.map { ["/bin/sh", "-c", #"cd "$0" && exec "$@""#, $0.path] + argv } ?? argv
    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }
    posix_spawn_file_actions_addopen(&actions, 0, stdin, O_RDONLY, 0)
    posix_spawn_file_actions_addopen(&actions, 1, stdout, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
    posix_spawn_file_actions_addopen(&actions, 2, stderr, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
    let env = (environment ?? ProcessInfo.processInfo.environment).map { "\($0.key)=\($0.value)" }
    var cArgs = command.map { strdup($0) } + [nil]
    var cEnv = env.map { strdup($0) } + [nil]
    defer { (cArgs + cEnv).forEach { free($0) } }
    var pid: pid_t = 0
    // As from a shell: taskrun would inherit what the test process blocks or ignores, and so
    // would what Lua starts.
    let error = withShellSignals { posix_spawnp(&pid, command[0], &actions, &$0, &cArgs, &cEnv) }
    guard error == 0 else { throw POSIXError(POSIXErrorCode(rawValue: error) ?? .EIO) }
    self.pid = pid
  }

  /// The exit code (128 + signal when killed), or nil if it is still running after `timeout`.
  func wait(timeout: Double = .infinity) -> Int32? {
    let deadline = Date().addingTimeInterval(min(timeout, 86_400))
    var status: Int32 = 0
    while true {
      let reaped = waitpid(pid, &status, WNOHANG)
      if reaped == pid || (reaped == -1 && errno != EINTR) { break }
      if Date() >= deadline { return nil }
      usleep(5_000)
    }
    let signal = status & 0x7f
    return signal == 0 ? (status >> 8) & 0xff : 128 + signal
  }

  /// Runs `argv` to its end and returns its exit code and standard output.
  static func output(_ argv: [String]) throws -> (status: Int32, stdout: String) {
    let file = Scratch.root.appendingPathComponent("child-\(UUID().uuidString)")
    defer { try? FileManager.default.removeItem(at: file) }
    let status = try Child(argv, stdout: file.path).wait() ?? -1
    return (status, (try? String(contentsOf: file, encoding: .utf8)) ?? "")
  }
}
