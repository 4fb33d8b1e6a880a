// Randomized stress: random graphs and random signals through the binary, checked from --events.
//
// Each case is a random workflow (commands, Lua bodies, failures, retries, timeouts, mutexes,
// resources, a limited queue, groups, produced operations, `when`) run with a random -j, -k
// or not, and in a third of the cases a SIGINT, SIGTERM or SIGHUP at a random moment. The
// events must show: one run_finish per run_start, exactly one finish per operation, nothing
// started after an interrupt, queue, mutex and resource limits held, exit 0/1/130 as fits, and
// no process of the run left. Seeded and reproducible: a failure prints the seed and script.
//
// It runs only when TASKRUN_STRESS_SECONDS is set (scripts/test runs it on its own after the
// other tests, 90 s, so that its load does not skew their timing):
//   TASKRUN_STRESS_SECONDS=90 swift test --filter StressTests                        # as CI
//   TASKRUN_STRESS_SECONDS=1800 swift test --filter StressTests                      # longer
//   TASKRUN_STRESS_SEED=1234 TASKRUN_STRESS_SECONDS=30 swift test --filter StressTests  # replay
import Foundation
import TestSupport
import Testing

/// A random workflow and what the checks need to know about it.
struct RandomGraph {
  var script = ""
  var names: [String] = []  // every operation declared up front (not produced ones)
  var onQueue: Set<String> = []  // operations of queue "q"
  var queueLimit = 1
  var mutexUsers: Set<String> = []  // mutex "m1"
  var resourceUsers: Set<String> = []  // resource("r", 2)

  init(_ rng: inout SplitMix64, env: String) {
    queueLimit = rng.int(1...3)
    script = "local q = queue { name = \"q\", max_concurrent = \(queueLimit) }\n"
    let count = rng.int(4...24)
    for i in 0..<count {
      let name = "op\(i)"
      if rng.chance(0.1) && i + 2 < count {  // a group of two fresh children
        script += "group { name = \"\(name)\", \(leaf("\(name)a", &rng, env)), \(leaf("\(name)b", &rng, env)) }\n"
        names += [name, "\(name)a", "\(name)b"]
        continue
      }
      var fields = [body(name, &rng, env)]
      let earlier = names.filter { !$0.hasSuffix("a") && !$0.hasSuffix("b") }
      if !earlier.isEmpty && rng.chance(0.6) {
        let deps = (0..<rng.int(1...2)).map { _ in "\"\(rng.pick(earlier))\"" }
        fields.append("after = { \(Array(Set(deps)).joined(separator: ", ")) }")
        if rng.chance(0.2) { fields.append("when = \"\(rng.pick(["failed", "finished"]))\"") }
      }
      if rng.chance(0.15) {
        fields.append("retries = \(rng.int(1...2))")
      } else if rng.chance(0.1) {
        fields.append("retry = { max = 2, delay = 0.0\(rng.int(1...5)) }")
      }
      if rng.chance(0.15) { fields.append("timeout = 0.0\(rng.int(3...9))") }
      // A body that waits gives its slot back meanwhile: the limit counts the others only.
      if rng.chance(0.2) && !fields[0].contains("wait(") { fields.append("queue = q"); onQueue.insert(name) }
      if rng.chance(0.15) {
        fields.append("conditions = { mutex \"m1\" }"); mutexUsers.insert(name)
      } else if rng.chance(0.15) {
        fields.append("conditions = { resource(\"r\", 2) }"); resourceUsers.insert(name)
      }
      script += "operation { name = \"\(name)\", \(fields.joined(separator: ", ")) }\n"
      names.append(name)
    }
  }

  /// A plain operation for a group.
  func leaf(_ name: String, _ rng: inout SplitMix64, _ env: String) -> String {
    "operation { name = \"\(name)\", \(body(name, &rng, env)) }"
  }

  /// What an operation does: a command or a Lua body, sometimes failing, sometimes producing.
  func body(_ name: String, _ rng: inout SplitMix64, _ env: String) -> String {
    switch rng.int(0...7) {
    case 0: return "\(env), sh = \"true\""
    case 1: return "\(env), sh = \"false\""
    case 2: return "\(env), sh = \"sleep 0.0\(rng.int(1...9))\""
    case 3: return "\(env), sh = [[sh -c 'sleep 0.0\(rng.int(1...5)); exit 3']]"
    case 4: return "run = function() sleep(0.0\(rng.int(0...9))) end"
    case 5: return "run = function() error(\"boom\") end"
    case 6: return "run = function() local t = os.clock() while os.clock() - t < 0.02 do end end"
    default:  // a produced operation, waited for
      return "run = function() wait(operation { name = \"\(name)-made\", \(env), sh = \"sleep 0.01\" }) end"
    }
  }
}

@Suite(.serialized) struct StressTests {
  static let budget = ProcessInfo.processInfo.environment["TASKRUN_STRESS_SECONDS"].flatMap(Double.init)

  @Test(.enabled(if: budget != nil)) func randomGraphsAndSignalsKeepEveryInvariant() throws {
    let environment = ProcessInfo.processInfo.environment
    let seed = environment["TASKRUN_STRESS_SEED"].flatMap(UInt64.init) ?? UInt64.random(in: 1...UInt64(UInt32.max))
    let budget = Self.budget ?? 0
    print("StressTests: seed \(seed), \(Int(budget)) s (TASKRUN_STRESS_SEED=\(seed) replays it)")
    var rng = SplitMix64(state: seed)
    let deadline = Date().addingTimeInterval(budget)
    var cases = 0
    while Date() < deadline {
      cases += 1
      let failures = try runCase(&rng)
      if !failures.isEmpty {
        Issue.record("seed \(seed), case \(cases): \(failures.joined(separator: "; "))")
        return
      }
    }
    print("StressTests: \(cases) random runs kept every invariant")
    #expect(cases > 0)
  }

  /// Runs one random case; returns what went wrong (nothing when every invariant held).
  func runCase(_ rng: inout SplitMix64) throws -> [String] {
    var graph: RandomGraph!
    let w = try MarkedWorkflow { env in
      graph = RandomGraph(&rng, env: env)
      return graph.script
    }
    let jobs = rng.int(1...4)
    let keepGoing = rng.chance(0.5)
    let signal: Int32? = rng.chance(0.33) ? rng.pick([SIGINT, SIGTERM, SIGHUP]) : nil
    let delay = UInt32(rng.int(30_000...300_000))  // after the dynamic loader (see README)
    let started = try w.start(["-j\(jobs)"] + (keepGoing ? ["-k"] : []))
    if let signal { usleep(delay); kill(started.child.pid, signal) }
    let run = Binary.finish(started, timeout: 30)
    var failures: [String] = []
    func check(_ ok: Bool, _ what: @autoclosure () -> String) { if !ok { failures.append(what()) } }
    let events = w.events()
    let kinds = events.map { $0["event"] as? String ?? "" }

    check(
      signal == nil ? [0, 1].contains(run.status) : [0, 1, 130].contains(run.status),
      "exit \(run.status) (signal \(signal.map(String.init) ?? "none"))")
    let runStarts = kinds.filter { $0 == "run_start" }.count, runFinishes = kinds.filter { $0 == "run_finish" }.count
    check(runStarts == runFinishes && runFinishes <= 1, "\(runStarts) run_start, \(runFinishes) run_finish")
    check(runStarts == 1 || run.status == 130, "no run, exit \(run.status)")
    if let finish = events.last(where: { $0["event"] as? String == "run_finish" }) {
      // A signal after run_finish (taskrun is ending: finalizers, leftovers) exits 130 on a
      // run reported as not interrupted; the run's clock starts after the process's.
      let afterFinish = signal != nil && Double(delay) / 1e6 >= (finish["time"] as? Double ?? 0)
      check(
        (finish["interrupted"] as? Bool == true) == (run.status == 130) || (afterFinish && run.status == 130),
        "run_finish \(finish), exit \(run.status)")
    }

    // Every operation finishes exactly once; an attempt ends (finish or retry) before the next starts.
    var finishes: [String: Int] = [:], runningNow: Set<String> = [], peakQueue = 0, mutexHolders = 0,
      resourceHolders = 0
    var interrupted = false
    for event in events {
      guard let name = event["operation"] as? String else { continue }
      switch event["event"] as? String {
      case "op_start":
        check(!interrupted, "'\(name)' started after an interrupt")
        check(!runningNow.contains(name), "'\(name)' started twice without ending")
        runningNow.insert(name)
        if graph.onQueue.contains(name) { peakQueue = max(peakQueue, runningNow.intersection(graph.onQueue).count) }
        if graph.mutexUsers.contains(name) { mutexHolders += 1; check(mutexHolders <= 1, "mutex m1 held twice") }
        if graph.resourceUsers.contains(name) { resourceHolders += 1; check(resourceHolders <= 2, "resource r over 2") }
      case "op_finish", "op_retry":
        if runningNow.remove(name) != nil {
          if graph.mutexUsers.contains(name) { mutexHolders -= 1 }
          if graph.resourceUsers.contains(name) { resourceHolders -= 1 }
        }
        if event["event"] as? String == "op_finish" {
          finishes[name, default: 0] += 1
          if event["error_kind"] as? String == "interrupted" { interrupted = true }
        }
      default: break
      }
    }
    check(peakQueue <= graph.queueLimit, "queue q ran \(peakQueue) at once (limit \(graph.queueLimit))")
    check(finishes.values.allSatisfy { $0 == 1 }, "finished more than once: \(finishes.filter { $0.value != 1 })")
    if runStarts == 1 {
      let unfinished = graph.names.filter { finishes[$0] == nil }
      check(unfinished.isEmpty, "never finished: \(unfinished)")
    }
    check(w.survivors(after: 1).isEmpty, "processes of the run outlived it")
    if !failures.isEmpty {
      failures.append(
        "-j\(jobs)\(keepGoing ? " -k" : "")\(signal.map { " signal \($0) after \(delay / 1000) ms" } ?? "")\nscript:\n\(graph.script)\noutput:\n\(run.stdout)\(run.stderr)"
      )
    }
    return failures
  }
}
