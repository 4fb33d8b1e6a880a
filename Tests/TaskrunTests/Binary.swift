// Test support: run the built taskrun binary and capture what a user would see.
import Foundation
import TestSupport

/// What one run of taskrun printed, and how it exited.
struct Run {
  var status: Int32
  var stdout: String
  var stderr: String
}

enum Binary {
  /// The taskrun executable built beside the test bundle.
  static let url: URL = {
    let here = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
    for candidate in [here, here.deletingLastPathComponent()] {
      let url = candidate.appendingPathComponent("taskrun")
      if FileManager.default.isExecutableFile(atPath: url.path) { return url }
    }
    return packageRoot.appendingPathComponent(".build/debug/taskrun")
  }()

  static let packageRoot = URL(fileURLWithPath: #filePath)
    .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
  static let workflows = packageRoot.appendingPathComponent("Tests/Workflows")

  /// A run under way: its process and the files its output goes to.
  struct Started {
    var child: Child
    var out: URL
    var err: URL
  }

  /// Starts taskrun with `arguments` in `directory`; output goes to files so pipes never fill.
  static func start(
    _ arguments: [String], in directory: URL = workflows,
    environment: [String: String] = [:], input: String? = nil,
    program: String = url.path
  ) throws -> Started {
    var env = ProcessInfo.processInfo.environment
    env["NO_COLOR"] = "1"
    // A CI service's variables change the default output (blocks, folded): a test names them.
    for key in ["GITHUB_ACTIONS", "GITLAB_CI", "BUILDKITE", "TASKRUN_CI_GROUPS"] { env[key] = nil }
    for (k, v) in environment { env[k] = v }
    let temporary = Scratch.root
    let out = temporary.appendingPathComponent("taskrun-out-\(UUID().uuidString)")
    let err = temporary.appendingPathComponent("taskrun-err-\(UUID().uuidString)")
    var stdin = "/dev/null"
    if let input {
      let file = temporary.appendingPathComponent("taskrun-in-\(UUID().uuidString)")
      try input.write(to: file, atomically: true, encoding: .utf8)
      stdin = file.path
    }
    let child = try Child(
      [program] + arguments, in: directory, environment: env,
      stdin: stdin, stdout: out.path, stderr: err.path)
    return Started(child: child, out: out, err: err)
  }

  /// Waits for a started run; after `timeout` seconds it is interrupted, then killed.
  static func finish(_ started: Started, timeout: Double = 60) -> Run {
    var status = started.child.wait(timeout: timeout)
    if status == nil {
      kill(started.child.pid, SIGINT)
      status = started.child.wait(timeout: 0.2)
      if status == nil { kill(started.child.pid, SIGKILL); status = started.child.wait() }
    }
    defer {
      try? FileManager.default.removeItem(at: started.out)
      try? FileManager.default.removeItem(at: started.err)
    }
    return Run(
      status: status ?? -1,
      stdout: (try? String(contentsOf: started.out, encoding: .utf8)) ?? "",
      stderr: (try? String(contentsOf: started.err, encoding: .utf8)) ?? "")
  }

  static func run(_ arguments: [String], in directory: URL = workflows) throws -> Run {
    finish(try start(arguments, in: directory))
  }
}
