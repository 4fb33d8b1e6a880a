// Measure: runs a program to its end and reports its wall time and peak memory.
import Foundation

/// One run of a program: seconds of wall time, CPU seconds (user and system, its own and its
/// commands'), the CPU seconds it spent itself where asked for, peak resident memory in KB,
/// exit status, and whether it was stopped after the time limit.
struct Sample {
  var seconds: Double
  var cpu = 0.0
  var ownCPU = Double.nan
  var peakKB: Int
  var status: Int32
  var timedOut = false
  /// The start of what it wrote to standard error, when it failed.
  var stderr = ""
}

enum Measure {
  /// glibc's pidfd_open (2.36; Swift's Glibc module does not show it), or nil.
  static let pidfdOpen: (@convention(c) (pid_t, UInt32) -> Int32)? =
    dlsym(UnsafeMutableRawPointer(bitPattern: 0), "pidfd_open").map {
      unsafeBitCast($0, to: (@convention(c) (pid_t, UInt32) -> Int32).self)
    }

  /// libOwnCPU.so, built beside this harness: preloaded, it writes the program's own CPU time.
  static let ownCPULibrary = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
    .deletingLastPathComponent().appendingPathComponent("libOwnCPU.so").path
  static let ownCPUFile = NSTemporaryDirectory() + "taskrun-bench-own-cpu"

  /// Runs `argv` (searched in PATH) in `directory` with output discarded, or written to
  /// `terminal` (a pseudo-terminal's other end); wait4 gives the child's own peak RSS and the
  /// CPU time of it and its children. With `ownCPU`, libOwnCPU.so is preloaded into the
  /// program (not into its commands) to tell its own CPU time apart; a program run in
  /// `directory` starts from a shell, so it has to change directory itself (`make -C`).
  static func run(
    _ argv: [String], in directory: String? = nil, limit: Double = 600,
    terminal: String? = nil, ownCPU: Bool = false
  ) -> Sample {
    precondition(!ownCPU || directory == nil, "the shell that changes directory would take the preload")
    let command = directory.map { ["/bin/sh", "-c", #"cd "$0" && exec "$@""#, $0] + argv } ?? argv
    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }
    posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
    posix_spawn_file_actions_addopen(&actions, 1, terminal ?? "/dev/null", O_WRONLY, 0)
    posix_spawn_file_actions_addopen(&actions, 2, "/tmp/taskrun-bench-stderr", O_WRONLY | O_CREAT | O_TRUNC, 0o644)
    var cArgs = command.map { strdup($0) } + [nil]
    defer { cArgs.forEach { free($0) } }
    // The environment as it is, and with `ownCPU` what the preloaded library reads.
    var cEnvironment: [UnsafeMutablePointer<CChar>?] = []
    for index in 0... { guard let variable = environ[index] else { break }; cEnvironment.append(strdup(variable)) }
    if ownCPU {
      unlink(ownCPUFile)
      cEnvironment += [strdup("LD_PRELOAD=" + ownCPULibrary), strdup("OWN_CPU_FILE=" + ownCPUFile)]
    }
    cEnvironment.append(nil)
    defer { cEnvironment.forEach { free($0) } }
    var pid: pid_t = 0
    let start = DispatchTime.now().uptimeNanoseconds
    guard posix_spawnp(&pid, command[0], &actions, nil, &cArgs, &cEnvironment) == 0 else {
      return Sample(seconds: .nan, peakKB: 0, status: 127)
    }
    var status: Int32 = 0
    var usage = rusage()
    var timedOut = false
    // The end is seen the moment it comes: a pidfd polled until the limit (a wait4 loop that
    // slept 1 ms between looks added up to a millisecond to every sample).
    let pidfd = Self.pidfdOpen.map { $0(pid, 0) } ?? -1
    if pidfd >= 0 {
      var ready = pollfd(fd: pidfd, events: Int16(POLLIN), revents: 0)
      while true {
        let left = limit - Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
        let polled = poll(&ready, 1, Int32(max(0, min(left, 3600)) * 1000))
        if polled > 0 { break }
        if polled == 0 { kill(pid, SIGKILL); timedOut = true; break }  // not reaped yet: still ours
        if errno != EINTR { break }
      }
      close(pidfd)
    }
    var seconds = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
    while wait4(pid, &status, 0, &usage) < 0 && errno == EINTR {}
    if pidfd < 0 { seconds = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9 }  // no limit then
    let cpu =
      Double(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec)
      + Double(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6
    var own = Double.nan
    if ownCPU, let line = try? String(contentsOfFile: ownCPUFile, encoding: .utf8),
      let microseconds = Double(line.trimmingCharacters(in: .whitespacesAndNewlines))
    {
      own = microseconds / 1e6
    }
    let code = timedOut ? 0 : (status >> 8) & 0xff
    let stderr = code == 0 ? "" : (try? String(contentsOfFile: "/tmp/taskrun-bench-stderr", encoding: .utf8)) ?? ""
    return Sample(
      seconds: seconds, cpu: cpu, ownCPU: own, peakKB: usage.ru_maxrss,
      status: code, timedOut: timedOut, stderr: String(stderr.prefix(300)))
  }

  /// A program to measure and how it runs (see `run`).
  struct Command {
    var argv: [String]
    var directory: String? = nil
    var limit: Double = 600
    var terminal: String? = nil
    var ownCPU = false
  }

  /// The median of `repeats` runs of each command (wall time and CPU times each their own
  /// median), with the largest peak memory seen. The commands take turns (a, b, a, b, …), so a
  /// machine that gets busier or quieter during a sitting moves the sides of a ratio alike.
  static func medians(_ repeats: Int, _ commands: [Command]) -> [Sample] {
    func run(_ c: Command) -> Sample {
      Self.run(c.argv, in: c.directory, limit: c.limit, terminal: c.terminal, ownCPU: c.ownCPU)
    }
    var samples = commands.map { [run($0)] }
    for _ in 1..<max(1, repeats) {
      // Once is enough to know one is too slow.
      for (i, command) in commands.enumerated() where !samples[i][0].timedOut { samples[i].append(run(command)) }
    }
    return zip(commands, samples).map { command, runs in
      let sorted = runs.sorted { $0.seconds < $1.seconds }
      var middle = sorted[sorted.count / 2]
      middle.cpu = runs.map(\.cpu).sorted()[runs.count / 2]
      middle.ownCPU = runs.map(\.ownCPU).sorted()[runs.count / 2]
      middle.peakKB = runs.map(\.peakKB).max() ?? 0
      if let failed = runs.first(where: { $0.status != 0 }) {
        print("  ! \(command.argv.joined(separator: " ")) exited \(failed.status): \(failed.stderr)")
      }
      return middle
    }
  }

  /// One command's `medians`.
  static func median(
    _ repeats: Int, _ argv: [String], in directory: String? = nil, limit: Double = 600,
    terminal: String? = nil, ownCPU: Bool = false
  ) -> Sample {
    medians(repeats, [Command(argv: argv, directory: directory, limit: limit, terminal: terminal, ownCPU: ownCPU)])[0]
  }

  /// Instructions `argv` executes (valgrind's cachegrind, user space), or nil without valgrind.
  /// Valgrind cannot read the debug information of a static Swift binary: give it a copy
  /// stripped of it (`strip --strip-debug`).
  static func instructions(_ argv: [String]) -> Double? {
    let sample = run(["valgrind", "--tool=cachegrind", "--cache-sim=no", "--cachegrind-out-file=/dev/null"] + argv)
    guard sample.status == 0,
      let text = try? String(contentsOfFile: "/tmp/taskrun-bench-stderr", encoding: .utf8),
      let line = text.split(separator: "\n").first(where: { $0.contains("I") && $0.contains("refs:") }),
      let count = Double(line.split(separator: ":").last!.filter(\.isNumber))
    else { return nil }
    return count
  }

  /// Times `body` in this process: the best of `repeats` runs, in seconds.
  static func best(_ repeats: Int = 5, _ body: () -> Void) -> Double {
    var best = Double.infinity
    for _ in 0..<repeats {
      let start = DispatchTime.now().uptimeNanoseconds
      body()
      best = min(best, Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9)
    }
    return best
  }
}

/// A table printed with aligned columns.
struct Table {
  var title: String
  var header: [String]
  var rows: [[String]] = []

  func print() {
    var widths = header.map(\.count)
    for row in rows { for (i, cell) in row.enumerated() { widths[i] = max(widths[i], cell.count) } }
    func line(_ cells: [String]) -> String {
      "| "
        + cells.enumerated().map { $1.padding(toLength: widths[$0], withPad: " ", startingAt: 0) }
        .joined(separator: " | ") + " |"
    }
    Swift.print("\n### \(title)\n")
    Swift.print(line(header))
    Swift.print("| " + widths.map { String(repeating: "-", count: $0) }.joined(separator: " | ") + " |")
    for row in rows { Swift.print(line(row)) }
  }
}

func f(_ value: Double, _ digits: Int = 2) -> String { String(format: "%.\(digits)f", value) }
