// Memory: the run store's rows: a no-op run against ninja's, what the store costs a first run, the ETA and the order from history.
import Foundation

/// The run store's tables, each printed when measured.
@MainActor func printRunStoreTables() {
  noOpTable().print()
  firstRunTable().print()
  etaTable().print()
  criticalPathTable().print()
}

/// A scratch folder of its own for one scenario, holding benchmarks/store.lua (the store is
/// `.taskrun/` beside the script).
@MainActor func storeFolder(_ scenario: String) -> String {
  let folder = NSTemporaryDirectory() + "taskrun-bench-store-\(getpid())-\(scenario)"
  try? FileManager.default.removeItem(atPath: folder)
  try? FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
  try? FileManager.default.copyItem(atPath: root + "/benchmarks/store.lua", toPath: folder + "/store.lua")
  return folder
}

/// Runs `argv` untimed, saying so when it fails.
func prepare(_ argv: [String]) {
  let run = Measure.run(argv)
  if run.status != 0 { print("  ! \(argv.joined(separator: " ")) exited \(run.status): \(run.stderr)") }
}

/// N source files `src/fI.txt`, the folders their copies go to (`out/` for store.lua's `cp`
/// case, `nout/` for ninja's), and a build.ninja with the same N `cp` edges.
func writeCopies(_ n: Int, in folder: String) throws {
  for sub in ["src", "out", "nout"] {
    try FileManager.default.createDirectory(atPath: folder + "/" + sub, withIntermediateDirectories: true)
  }
  var ninja = "rule cp\n  command = cp $in $out\n"
  for i in 0..<n {
    try "\(i)\n".write(toFile: folder + "/src/f\(i).txt", atomically: false, encoding: .utf8)
    ninja += "build nout/f\(i).txt: cp src/f\(i).txt\n"
  }
  try ninja.write(toFile: folder + "/build.ninja", atomically: true, encoding: .utf8)
}

/// 2020-01-01: a file of that date was written long before taskrun next hashes it, so taskrun
/// trusts its stat from then on.
let backdated = 1_577_836_800

/// The paths of the files in `folders`.
func files(in folders: [String]) -> [String] {
  folders.flatMap { folder in
    ((try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []).map { folder + "/" + $0 }
  }
}

/// Dates `paths` `backdated`.
func backdate(_ paths: [String]) {
  var times = [timeval(tv_sec: backdated, tv_usec: 0), timeval(tv_sec: backdated, tv_usec: 0)]
  for path in paths { utimes(path, &times) }
}

/// How many of `paths` were written since `backdate` (rebuilt by what should have been a no-op).
func rewritten(_ paths: [String]) -> Int {
  paths.filter { path in
    var info = stat()
    return stat(path, &info) != 0 || info.st_mtim.tv_sec != backdated
  }.count
}

/// A no-op run: N `cp` operations whose files are as at their last success, against ninja with
/// the same N edges up to date. Both build once (untimed), the files are then backdated, and
/// taskrun runs once more to record their stats (it trusts a stat only of a file written over
/// 2 s before it was hashed); then wall time, and instructions where valgrind is.
@MainActor func noOpTable() -> Table {
  // Building 10,000 copies takes each side about 25 s at -j2.
  let n = quick ? 2_000 : 10_000
  var table = Table(
    title: "Run store: a no-op run of \(n) up-to-date `cp` operations (inputs and outputs) against ninja's",
    header: ["tool", "wall ms", "/ ninja", "instructions", "/ ninja"])
  let folder = storeFolder("noop")
  defer { try? FileManager.default.removeItem(atPath: folder) }
  do { try writeCopies(n, in: folder) } catch {
    table.rows.append(["(could not write the files: \(error))", "", "", "", ""])
    return table
  }
  let script = ["-C", folder, "store.lua", "--", "cp", "\(n)"]
  let ninja = ["ninja", "-C", folder, "-f", "build.ninja"]
  prepare([taskrun, "-q", "-j\(jobs)"] + script)
  prepare(ninja + ["-j\(jobs)"])
  let built = files(in: ["src", "out", "nout"].map { folder + "/" + $0 })
  backdate(built)
  prepare([taskrun, "-q"] + script)
  let runs = Measure.medians(repeats * 3, [.init(argv: [taskrun, "-q"] + script), .init(argv: ninja)])
  let (t, j) = (runs[0].seconds, runs[1].seconds)
  // Valgrind cannot read the debug information of a static Swift binary: a stripped copy.
  let stripped = folder + "/taskrun-stripped"
  let counts =
    Measure.run(["strip", "--strip-debug", "-o", stripped, taskrun]).status == 0
    ? (Measure.instructions([stripped, "-q"] + script), Measure.instructions(ninja)) : (nil, nil)
  let copies = rewritten(built)
  if copies > 0 { print("  ! \(copies) files were written again by the no-op runs") }
  let ratio = counts.0.flatMap { ti in counts.1.map { ti / $0 } }
  func millions(_ count: Double?) -> String { count.map { f($0 / 1e6, 0) + "M" } ?? "(no valgrind)" }
  table.rows.append(["taskrun -q", f(t * 1000, 1), f(t / j), millions(counts.0), ratio.map { f($0) } ?? "-"])
  table.rows.append(["ninja", f(j * 1000, 1), "1.00", millions(counts.1), counts.1 == nil ? "-" : "1.00"])
  targets.check("no-op \(n) cp: taskrun / ninja", t / j, atMost: 1.5)
  return table
}

/// A first run of 1,000 `true` commands (`.taskrun/` removed before each) against the same run
/// with --no-store, each side in a folder of its own.
@MainActor func firstRunTable() -> Table {
  var table = Table(
    title: "Run store: a first run of 1,000 `true` commands at -j\(jobs), with the store and with --no-store",
    header: ["run", "wall s", "CPU s", "wall / --no-store"])
  let folders = [storeFolder("first"), storeFolder("no-store")]
  defer { folders.forEach { try? FileManager.default.removeItem(atPath: $0) } }
  // The same shell line on both sides (with --no-store, rm finds nothing to remove).
  let runs = Measure.medians(
    repeats * 3,
    zip(folders, [[], ["--no-store"]]).map { folder, options in
      .init(
        argv: ["sh", "-c", #"cd "$0" && rm -rf .taskrun && exec "$@""#, folder, taskrun, "-q", "-j\(jobs)"]
          + options + ["store.lua", "--", "true", "1000"])
    })
  let (stored, unstored) = (runs[0], runs[1])
  table.rows.append([
    "with the store (a first run)", f(stored.seconds, 3), f(stored.cpu, 3), f(stored.seconds / unstored.seconds)
  ])
  table.rows.append(["--no-store", f(unstored.seconds, 3), f(unstored.cpu, 3), "1.00"])
  targets.check("first run 1000 true: store / --no-store", stored.seconds / unstored.seconds, atMost: 1.05)
  return table
}

/// One line of an --events file: the fields these rows read.
struct Event: Decodable {
  var time: Double
  var event: String
  var eta: Double?
}

/// The events of an --events file, in order.
func events(_ path: String) -> [Event] {
  let text = (try? String(contentsOfFile: path, encoding: .utf8)) ?? ""
  return text.split(separator: "\n").compactMap { try? JSONDecoder().decode(Event.self, from: Data($0.utf8)) }
}

/// The run's time: its `run_finish` event's (else its last event's).
func runTime(_ events: [Event]) -> Double {
  (events.last { $0.event == "run_finish" } ?? events.last)?.time ?? .nan
}

/// The sleeping runs of the ETA and critical path rows: each lasts seconds.
let sleepingRepeats = quick ? 1 : 3

/// The ETA against the time in fact left, at the first `progress` event with an ETA from 10%
/// of the run on: 20 commands sleeping 0.2 to 1.5 s at -j2, a first run (no history) and then
/// runs with the durations of the ones before.
@MainActor func etaTable() -> Table {
  // 15 s of sleep, 7.5 s at -j2 (quick: 5.3 s).
  let scale = quick ? 0.7 : 1.0
  var table = Table(
    title: "Run store: the ETA from history (20 commands sleeping \(f(0.2 * scale)) to \(f(1.5 * scale)) s, -j2), "
      + "at the first progress event from 10% of the run on",
    header: ["run", "run s", "at s", "ETA s", "left s", "ETA error / left"])
  let folder = storeFolder("eta")
  defer { try? FileManager.default.removeItem(atPath: folder) }
  let file = folder + "/events.jsonl"
  let argv = [
    taskrun, "-q", "-j2", "--progress", "none", "--events", file, "-C", folder, "store.lua", "--", "sleeps", "\(scale)"
  ]
  // The run's time, the event's time and ETA, and the error (infinite without an ETA).
  func measure() -> (run: Double, at: Double, eta: Double, error: Double) {
    prepare(argv)
    let all = events(file)
    let run = runTime(all)
    guard let first = all.first(where: { $0.event == "progress" && $0.time >= run / 10 && $0.eta != nil }),
      let eta = first.eta
    else { return (run, .nan, .nan, .infinity) }
    return (run, first.time, eta, abs(eta - (run - first.time)) / (run - first.time))
  }
  func row(_ label: String, _ m: (run: Double, at: Double, eta: Double, error: Double)) -> [String] {
    m.eta.isNaN
      ? [label, f(m.run), "(no progress event with an ETA from 10% on)", "", "", ""]
      : [label, f(m.run), f(m.at), f(m.eta), f(m.run - m.at), f(m.error, 3)]
  }
  table.rows.append(row("first run (no history)", measure()))
  let later = (0..<sleepingRepeats).map { _ in measure() }.sorted { $0.error < $1.error }
  let median = later[later.count / 2]
  table.rows.append(
    row(sleepingRepeats == 1 ? "second run (history)" : "later runs (history), median of \(sleepingRepeats)", median))
  targets.check("ETA from history at 10%: error / time left", median.error, atMost: 0.15)
  return table
}

/// The longest path first: 8 commands sleeping 0.5 s declared before a chain of 4 sleeping 1 s,
/// at -j2; a first run (no history: declaration order) and a second (history), against the
/// critical-path bound.
@MainActor func criticalPathTable() -> Table {
  let (width, short, length, long) = (8, 0.5, 4, 1.0)
  let bound = max(Double(length) * long, (Double(width) * short + Double(length) * long) / 2)
  var table = Table(
    title: "Run store: the longest path first (\(width) × sleep \(short) declared before a chain of "
      + "\(length) × sleep \(long), -j2; bound \(f(bound)) s)",
    header: ["run", "makespan s", "bound s", "makespan / bound"])
  let folder = storeFolder("critical")
  defer { try? FileManager.default.removeItem(atPath: folder) }
  let file = folder + "/events.jsonl"
  let argv = [
    taskrun, "-q", "-j2", "--progress", "none", "--events", file, "-C", folder, "store.lua", "--", "critical",
    "\(width)", "\(short)", "\(length)", "\(long)"
  ]
  func makespan() -> Double {
    prepare(argv)
    return runTime(events(file))
  }
  // Pairs of a first and a second run, the store removed before each pair.
  var (firsts, seconds) = ([Double](), [Double]())
  for _ in 0..<sleepingRepeats {
    try? FileManager.default.removeItem(atPath: folder + "/.taskrun")
    firsts.append(makespan())
    seconds.append(makespan())
  }
  let (first, second) = (firsts.sorted()[firsts.count / 2], seconds.sorted()[seconds.count / 2])
  table.rows.append(["first run (declaration order)", f(first, 3), f(bound), f(first / bound, 3)])
  table.rows.append(["second run (history)", f(second, 3), f(bound), f(second / bound, 3)])
  targets.check("critical path: second-run makespan / bound", second / bound, atMost: 1.05)
  return table
}
