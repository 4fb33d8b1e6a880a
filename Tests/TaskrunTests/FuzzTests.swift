// Fuzzing the Lua API: Tests/Fuzz/fuzz.lua calls every global, field and method with hostile values.
//
// Each case runs the fuzz script with a seed of its own (at the top level, inside bodies and
// pcall); taskrun must not die by a signal (a Swift trap, a Lua panic), hang, or exit with
// anything but 0, 1 or 2, and an exit 2 says why. It runs when TASKRUN_FUZZ_SECONDS is set;
// scripts/test runs it alone, after the other Swift tests, for 60 s:
//   TASKRUN_FUZZ_SECONDS=1800 swift test --filter FuzzTests                    # longer
//   TASKRUN_FUZZ_SEED=42 TASKRUN_FUZZ_SECONDS=5 swift test --filter FuzzTests  # replay a seed
import Foundation
import TestSupport
import Testing

@Suite(.serialized) struct FuzzTests {
  static let budget = ProcessInfo.processInfo.environment["TASKRUN_FUZZ_SECONDS"].flatMap(Double.init)
  static let script = Binary.packageRoot.appendingPathComponent("Tests/Fuzz/fuzz.lua").path

  @Test(.enabled(if: budget != nil)) func hostileValuesNeverCrashOrHangTheHost() throws {
    let environment = ProcessInfo.processInfo.environment
    let first = environment["TASKRUN_FUZZ_SEED"].flatMap(Int.init) ?? Int.random(in: 1...1_000_000_000)
    print("FuzzTests: first seed \(first), \(Int(Self.budget ?? 0)) s (TASKRUN_FUZZ_SEED=\(first) replays it)")
    let deadline = Date().addingTimeInterval(Self.budget ?? 0)
    var seed = first, cases = 0
    let dir = Scratch.root.appendingPathComponent("taskrun-fuzz-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
    repeat {
      let started = try Binary.start(
        ["--yes", "--progress", "none", "-k", Self.script, "--", "\(seed)", "200"], in: dir)
      var status: Int32 = 0
      let limit = Date().addingTimeInterval(60)
      while waitpid(started.child.pid, &status, WNOHANG) == 0 && Date() < limit { usleep(5_000) }
      let hung = Date() >= limit
      let run = Binary.finish(started, timeout: 0.1)
      let signal = status & 0x7f, code = (status >> 8) & 0xff
      let problem =
        hung
        ? "hung for 60 s"
        : signal != 0
          ? "killed by signal \(signal)"
          : ![0, 1, 2].contains(code)
            ? "exit \(code)"
            : code == 2 && run.stderr.isEmpty
              ? "exit 2 without a message"
              : run.stderr.contains("PANIC") || run.stderr.contains("Fatal error") ? "a crash report" : nil
      if let problem {
        Issue.record("seed \(seed): \(problem)\n\(run.stderr.suffix(3000))")
        return
      }
      cases += 1
      seed += 1
    } while Date() < deadline
    print("FuzzTests: \(cases) seeds from \(first) kept the host alive")
  }
}
