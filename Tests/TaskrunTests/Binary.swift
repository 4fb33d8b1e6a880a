// Test support: run the built taskrun binary and capture what a user would see.
import Foundation

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

  /// Starts taskrun with `arguments` in `directory`; output goes to files so pipes never fill.
  static func start(_ arguments: [String], in directory: URL = workflows,
                    environment: [String: String] = [:], input: String? = nil) throws -> (Process, URL, URL) {
    let process = Process()
    process.executableURL = url
    process.arguments = arguments
    process.currentDirectoryURL = directory
    var env = ProcessInfo.processInfo.environment
    env["NO_COLOR"] = "1"
    for (k, v) in environment { env[k] = v }
    process.environment = env
    let out = FileManager.default.temporaryDirectory.appendingPathComponent("taskrun-out-\(UUID().uuidString)")
    let err = FileManager.default.temporaryDirectory.appendingPathComponent("taskrun-err-\(UUID().uuidString)")
    FileManager.default.createFile(atPath: out.path, contents: nil)
    FileManager.default.createFile(atPath: err.path, contents: nil)
    process.standardOutput = try FileHandle(forWritingTo: out)
    process.standardError = try FileHandle(forWritingTo: err)
    if let input {
      let file = FileManager.default.temporaryDirectory.appendingPathComponent("taskrun-in-\(UUID().uuidString)")
      try input.write(to: file, atomically: true, encoding: .utf8)
      process.standardInput = try FileHandle(forReadingFrom: file)
    } else {
      process.standardInput = FileHandle.nullDevice
    }
    try process.run()
    return (process, out, err)
  }

  /// Waits for a started run (polling: never `waitUntilExit`, which sleeps in 50 ms slices).
  static func finish(_ started: (Process, URL, URL), timeout: Double = 60) -> Run {
    let (process, out, err) = started
    let deadline = Date().addingTimeInterval(timeout)
    while process.isRunning && Date() < deadline { usleep(5_000) }
    if process.isRunning { process.interrupt(); usleep(200_000); kill(process.processIdentifier, SIGKILL) }
    while process.isRunning { usleep(5_000) }
    defer {
      try? FileManager.default.removeItem(at: out)
      try? FileManager.default.removeItem(at: err)
    }
    return Run(status: process.terminationStatus,
               stdout: (try? String(contentsOf: out, encoding: .utf8)) ?? "",
               stderr: (try? String(contentsOf: err, encoding: .utf8)) ?? "")
  }

  static func run(_ arguments: [String], in directory: URL = workflows) throws -> Run {
    finish(try start(arguments, in: directory))
  }
}
