// Watch: `taskrun -w`'s rows: from a saved change to the first affected command, and the CPU it takes watching an idle tree.
import Foundation

/// `taskrun -w` with standard output in a file, in `folder`, until `stop`.
final class Watcher {
  let process = Process()
  let log: String

  init(_ arguments: [String], in folder: String) throws {
    log = folder + "/watch.log"
    FileManager.default.createFile(atPath: log, contents: nil)
    process.executableURL = URL(fileURLWithPath: taskrun)
    process.arguments = ["-w", "--progress", "plain"] + arguments
    process.currentDirectoryURL = URL(fileURLWithPath: folder)
    process.standardOutput = FileHandle(forWritingAtPath: log)
    process.standardError = FileHandle.nullDevice
    try process.run()
  }

  var output: String { (try? String(contentsOfFile: log, encoding: .utf8)) ?? "" }

  /// Waits until "taskrun: watching" was printed `times` times (false after a minute).
  func waitUntilWatching(_ times: Int) -> Bool {
    let deadline = Date().addingTimeInterval(60)
    while output.components(separatedBy: "taskrun: watching").count - 1 < times {
      if Date() > deadline { return false }
      usleep(2_000)
    }
    return true
  }

  /// The CPU seconds it used so far (utime + stime of /proc/PID/stat).
  var cpuSeconds: Double {
    guard let stat = try? String(contentsOfFile: "/proc/\(process.processIdentifier)/stat", encoding: .utf8),
      let close = stat.lastIndex(of: ")")
    else { return .nan }
    let fields = stat[stat.index(after: close)...].split(separator: " ")
    // After the name: state is field 3; utime and stime are fields 14 and 15.
    guard fields.count > 13, let user = Double(fields[11]), let system = Double(fields[12]) else { return .nan }
    return (user + system) / Double(sysconf(Int32(_SC_CLK_TCK)))
  }

  func stop() {
    kill(process.processIdentifier, SIGINT)
    process.waitUntilExit()
  }
}

/// The rows of `taskrun -w`.
@MainActor func watchTable() -> Table {
  var table = Table(
    title: "Watch mode (-w): from a saved change to its first command starting, and CPU while idle",
    header: ["case", "result", "target"])
  let debounce = 100
  // 1,000 files, one `cp` operation each; a change of one runs that one.
  let n = 1_000
  let folder = storeFolder("watch")
  defer { try? FileManager.default.removeItem(atPath: folder) }
  do {
    try FileManager.default.createDirectory(atPath: folder + "/src", withIntermediateDirectories: true)
    try FileManager.default.createDirectory(atPath: folder + "/out", withIntermediateDirectories: true)
    for i in 0..<n { try "\(i)\n".write(toFile: folder + "/src/f\(i).txt", atomically: false, encoding: .utf8) }
    try """
    for i = 0, \(n - 1) do
      operation { name = "cp" .. i, inputs = { "src/f" .. i .. ".txt" }, outputs = { "out/f" .. i .. ".txt" },
        sh = "date +%s%N > out/f" .. i .. ".stamp; cp src/f" .. i .. ".txt out/f" .. i .. ".txt" }
    end
    """.write(toFile: folder + "/watch.lua", atomically: true, encoding: .utf8)
    let watcher = try Watcher(["--debounce", "\(debounce)", "watch.lua"], in: folder)
    defer { watcher.stop() }
    guard watcher.waitUntilWatching(1) else { throw CocoaError(.fileReadUnknown) }
    var latencies: [Double] = []
    for (k, i) in [17, 333, 501, 777, 999].enumerated() {
      let stamp = folder + "/out/f\(i).stamp"
      try? FileManager.default.removeItem(atPath: stamp)
      let saved = Date().timeIntervalSince1970
      try "changed \(k)\n".write(toFile: folder + "/src/f\(i).txt", atomically: true, encoding: .utf8)
      guard watcher.waitUntilWatching(k + 2),
        let text = try? String(contentsOfFile: stamp, encoding: .utf8),
        let ns = Double(text.trimmingCharacters(in: .whitespacesAndNewlines))
      else { throw CocoaError(.fileReadUnknown) }
      latencies.append(ns / 1e9 - saved)
    }
    let median = latencies.sorted()[latencies.count / 2]
    let overDebounce = (median - Double(debounce) / 1000) * 1000
    table.rows.append([
      "saved change → its command starts (\(n) operations, --debounce \(debounce)), median of 5",
      String(format: "%.0f ms (%.0f ms past the debounce)", median * 1000, overDebounce), "debounce + 150 ms"
    ])
    targets.check("watch: change to first command, ms past the debounce", overDebounce, atMost: 150)
  } catch {
    table.rows.append(["(the latency case did not run: \(error))", "", ""])
  }
  // 10,000 files in 100 folders, watched by one glob, idle for 5 s.
  let idle = storeFolder("watch-idle")
  defer { try? FileManager.default.removeItem(atPath: idle) }
  do {
    for d in 0..<100 {
      try FileManager.default.createDirectory(atPath: idle + "/tree/d\(d)", withIntermediateDirectories: true)
      for f in 0..<100 {
        try "\(f)\n".write(toFile: idle + "/tree/d\(d)/f\(f).txt", atomically: false, encoding: .utf8)
      }
    }
    try
      #"operation { name = "count", sh = "find tree -type f | wc -l > count.out", inputs = { "tree/**" }, outputs = { "count.out" } }"#
      .write(toFile: idle + "/idle.lua", atomically: true, encoding: .utf8)
    let watcher = try Watcher(["idle.lua"], in: idle)
    defer { watcher.stop() }
    guard watcher.waitUntilWatching(1) else { throw CocoaError(.fileReadUnknown) }
    usleep(500_000)
    let before = watcher.cpuSeconds
    usleep(5_000_000)
    let used = watcher.cpuSeconds - before
    table.rows.append([
      "CPU while watching an idle tree of 10,000 files (100 folders), 5 s",
      String(format: "%.3f s (%.2f%%)", used, used / 5 * 100),
      "near zero (≤ 0.01 s)"
    ])
    targets.check("watch: CPU seconds over 5 s idle on 10,000 files", used, atMost: 0.01)
  } catch {
    table.rows.append(["(the idle case did not run: \(error))", "", ""])
  }
  return table
}
