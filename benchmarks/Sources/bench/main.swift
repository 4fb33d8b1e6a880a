// bench: taskrun against the tools users would pick instead, measured side by side.
//   benchmarks/run [--quick]        (builds taskrun and this harness in release, then runs)
//   benchmarks/run --cascades       (only the cascade rows: benchmarks/cascades.lua)
//   benchmarks/run --memory         (only the run store's rows: benchmarks/store.lua)
//   benchmarks/run --watch          (only -w's rows: a change to its command, CPU while idle)
//   bench oq SHAPE N JOBS           (internal: one OperationQueue graph, timed from outside)
import Foundation

let arguments = Array(CommandLine.arguments.dropFirst())
if arguments.first == "oq", arguments.count == 4, let shape = Shape(rawValue: arguments[1]),
  let n = Int(arguments[2]), let jobs = Int(arguments[3])
{
  if n > 0 { runOperationQueue(shape, n, jobs: jobs) }
  exit(0)
}

func option(_ name: String) -> String? {
  arguments.firstIndex(of: name).flatMap { $0 + 1 < arguments.count ? arguments[$0 + 1] : nil }
}
let quick = arguments.contains("--quick")
let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
  .deletingLastPathComponent().deletingLastPathComponent().path
// The statically linked release build (as installed); the dynamically linked one for start-up.
let taskrun = option("--taskrun") ?? root + "/.build-static/release/taskrun"
let dynamic = option("--dynamic") ?? root + "/.build/release/taskrun"
let bench = CommandLine.arguments[0]
let jobs = Int(option("--jobs") ?? "") ?? ProcessInfo.processInfo.activeProcessorCount
let graphs = root + "/benchmarks/graphs.lua"
let repeats = quick ? 1 : 5
let sizes = quick ? [1_000, 10_000] : [10_000, 100_000]
let commandSizes = quick ? [200, 1_000] : [1_000, 10_000]
/// The Lua floor's sizes: the first is the base of the growth ratio.
let floorSizes = quick ? [1_000, 10_000] : [10_000, 100_000, 1_000_000]
var targets = Targets()

print(
  "taskrun benchmarks: \(jobs) jobs, \(ProcessInfo.processInfo.activeProcessorCount) cores, "
    + "median of \(repeats) run(s) each, the sides of each ratio taking turns, all rows measured in this sitting")

// Baselines: what a process costs before it does any work.
let empties = Measure.medians(
  repeats * 3,
  [
    .init(argv: [taskrun, "-q", root + "/benchmarks/empty.lua"]),
    .init(argv: ["lua5.4", "-e", ""]),
    .init(argv: [bench, "oq", "independent", "0", "\(jobs)"])
  ])
let (emptyTaskrun, emptyLua, emptyQueue) = (empties[0], empties[1], empties[2])

// `--cascades`: only the cascade rows (and their targets).
if arguments.contains("--cascades") {
  cascadeTable().print()
  targets.print()
  exit(0)
}

// `--memory`: only the run store's rows (and their targets).
if arguments.contains("--memory") {
  printRunStoreTables()
  targets.print()
  exit(0)
}

// `--watch`: only -w's rows (and their targets).
if arguments.contains("--watch") {
  watchTable().print()
  targets.print()
  exit(0)
}

// 1. In-process work: no-op Lua operations against no-op BlockOperations.
var scheduling = Table(
  title: "No-op operations: taskrun (empty Lua bodies) vs OperationQueue (BlockOperation {})",
  header: [
    "shape", "operations", "taskrun µs/op", "OperationQueue µs/op", "taskrun / OQ",
    "taskrun KB/op", "OQ KB/op"
  ])
for shape in Shape.allCases {
  for n in sizes {
    // corelibs' OperationQueue is quadratic on a long chain (100,000: over 5 minutes).
    let runs = Measure.medians(
      repeats,
      [
        .init(argv: [taskrun, "-q", "-j\(jobs)", graphs, "--", shape.rawValue, "\(n)", "lua"]),
        .init(argv: [bench, "oq", shape.rawValue, "\(n)", "\(jobs)"], limit: 30)
      ])
    let (t, q) = (runs[0], runs[1])
    let tus = (t.seconds - emptyTaskrun.seconds) / Double(n) * 1e6
    let qus = (q.seconds - emptyQueue.seconds) / Double(n) * 1e6
    scheduling.rows.append([
      shape.rawValue, "\(n)", f(tus), q.timedOut ? "> \(f(30 / Double(n) * 1e6))" : f(qus),
      q.timedOut ? "< \(f(tus / (30 / Double(n) * 1e6), 3))" : f(tus / qus),
      f(Double(t.peakKB - emptyTaskrun.peakKB) / Double(n)),
      q.timedOut ? "-" : f(Double(q.peakKB - emptyQueue.peakKB) / Double(n))
    ])
  }
}
scheduling.print()

// 1b. No-op operations against what Lua itself spends on the same graph script.
floorTable().print()

// 1b'. Many queues: declaring them stays linear.
queueTable().print()

// 2. Trivial commands: taskrun vs ninja vs make on the same graphs.
let hasNinja = Measure.run(["ninja", "--version"]).status == 0
var commands = Table(
  title:
    "Commands (`true`) at -j\(jobs): taskrun vs ninja vs make (CPU: the tool and its commands; own CPU: the tool alone)",
  header: [
    "shape", "commands", "taskrun µs/cmd", "ninja µs/cmd", "make µs/cmd", "taskrun / ninja",
    "taskrun / make", "taskrun CPU µs/cmd", "make CPU µs/cmd", "taskrun own CPU µs/cmd",
    "make own CPU µs/cmd", "own CPU taskrun / make"
  ])
let scratch = NSTemporaryDirectory() + "taskrun-bench-\(getpid())"
try? FileManager.default.createDirectory(atPath: scratch, withIntermediateDirectories: true)
// taskrun and make run with libOwnCPU.so preloaded, the baseline too.
let emptyOwn = Measure.median(repeats * 3, [taskrun, "-q", root + "/benchmarks/empty.lua"], ownCPU: true)
if emptyOwn.ownCPU.isNaN { print("  ! no own CPU time from \(Measure.ownCPULibrary): its rows show -, and miss") }
for shape in Shape.allCases {
  for n in commandSizes {
    try writeBuildFiles(shape, n, in: scratch)
    var tools: [Measure.Command] = [
      .init(argv: [taskrun, "-q", "-j\(jobs)", graphs, "--", shape.rawValue, "\(n)", "sh"], ownCPU: true),
      .init(argv: ["make", "-s", "-C", scratch, "-j\(jobs)", "-f", "Makefile"], ownCPU: true)
    ]
    if hasNinja {
      tools.append(
        .init(
          argv: ["sh", "-c", "rm -f .ninja_log .ninja_deps; exec ninja -j\(jobs) -f build.ninja >/dev/null"],
          directory: scratch))
    }
    // Runs of 1,000 commands last a few tenths of a second, where wall time moves most:
    // three times the runs, as for every other row's smallest size.
    let runs = Measure.medians(n == commandSizes[0] ? repeats * 3 : repeats, tools)
    let (t, m) = (runs[0], runs[1])
    let tus = (t.seconds - emptyOwn.seconds) / Double(n) * 1e6
    let tcpu = (t.cpu - emptyOwn.cpu) / Double(n) * 1e6, town = (t.ownCPU - emptyOwn.ownCPU) / Double(n) * 1e6
    let nus = hasNinja ? runs[2].seconds / Double(n) * 1e6 : .nan
    let mus = m.seconds / Double(n) * 1e6, mcpu = m.cpu / Double(n) * 1e6, mown = m.ownCPU / Double(n) * 1e6
    commands.rows.append([
      shape.rawValue, "\(n)", f(tus), hasNinja ? f(nus) : "(no ninja)", f(mus),
      hasNinja ? f(tus / nus) : "-", f(tus / mus), f(tcpu), f(mcpu), f(town), f(mown), f(town / mown)
    ])
    if hasNinja { targets.check("commands \(shape.rawValue) \(n): wall / ninja", tus / nus, atMost: 0.9) }
    targets.check("commands \(shape.rawValue) \(n): wall / make", tus / mus, atMost: 1.0)
    targets.check("commands \(shape.rawValue) \(n): own CPU / make's", town / mown, atMost: 1.0)
  }
}
try? FileManager.default.removeItem(atPath: scratch)
commands.print()

// 2a. What --sandbox costs a command: 1,000 `true` commands, confined and not.
var sandboxTable = Table(
  title: "The sandbox: 1,000 `true` commands at -j\(jobs), without and with --sandbox",
  header: ["run", "µs/cmd", "CPU µs/cmd", "with / without"])
for shape in [Shape.independent, .chain] {
  let runs = Measure.medians(
    repeats * 3,
    [
      .init(argv: [taskrun, "-q", "-j\(jobs)", graphs, "--", shape.rawValue, "1000", "sh"]),
      .init(argv: [taskrun, "-q", "-j\(jobs)", "--sandbox", graphs, "--", shape.rawValue, "1000", "sh"])
    ])
  let per = runs.map { (($0.seconds - emptyOwn.seconds) / 1000 * 1e6, ($0.cpu - emptyOwn.cpu) / 1000 * 1e6) }
  sandboxTable.rows.append(["\(shape.rawValue), without", f(per[0].0), f(per[0].1), ""])
  sandboxTable.rows.append(["\(shape.rawValue), --sandbox", f(per[1].0), f(per[1].1), f(per[1].0 / per[0].0)])
  targets.check("sandbox \(shape.rawValue) 1000: wall with / without", per[1].0 / per[0].0, atMost: 1.25)
}
sandboxTable.print()

// 1c. Failures, skips, stops and Ctrl-C spreading through 1,000,000 operations and 100,000 nested groups.
cascadeTable().print()

// 2b. The live view's cost.
liveViewTable().print()

// 2c. Output throughput: 200 MB of random bytes (binary output, no newlines to speak of,
// as gzip or tar print) from a command, against the same bytes through a pipe to cat.
var output = Table(
  title: "Output throughput (200 MB of random bytes from `cat FILE`)",
  header: ["reader", "s", "MB/s", "/ cat"])
let randomFile = NSTemporaryDirectory() + "taskrun-bench-random-\(getpid())"
if Measure.run(["sh", "-c", "head -c 200000000 /dev/urandom > \(randomFile)"]).status == 0 {
  let runs = Measure.medians(
    repeats,
    [
      .init(argv: [taskrun, "-q", root + "/benchmarks/output.lua", "--", randomFile]),
      .init(argv: ["sh", "-c", "cat \(randomFile) | cat > /dev/null"])
    ])
  let (t, c) = (runs[0].seconds - emptyTaskrun.seconds, runs[1].seconds)
  output.rows.append(["taskrun (an operation's sh)", f(t, 3), f(200 / t, 0), f(t / c)])
  output.rows.append(["cat FILE | cat", f(c, 3), f(200 / c, 0), "1.00"])
  targets.check("output throughput: taskrun / cat", t / c, atMost: 2)
}
unlink(randomFile)
output.print()

// 3. Progress updates.
let updates = quick ? 200_000 : 1_000_000
var progress = Table(title: "Progress: one `completed` update", header: ["case", "ns/update"])
progress.rows.append(["engine leaf, no observer", f(ProgressBench.leaf(count: updates, observed: false), 1)])
progress.rows.append(["engine leaf, an onChange observer", f(ProgressBench.leaf(count: updates, observed: true), 1)])
progress.rows.append(["engine leaf 5 levels deep (the root follows)", f(ProgressBench.deep(count: updates), 1)])
let out = NSTemporaryDirectory() + "taskrun-bench-progress-\(getpid())"
_ = Measure.run([
  "sh", "-c", "exec \"$0\" -q \"$1\" -- \(updates) > \"$2\"", taskrun, root + "/benchmarks/progress.lua", out
])
let text = (try? String(contentsOfFile: out, encoding: .utf8)) ?? ""
try? FileManager.default.removeItem(atPath: out)
var lua: [String: Double] = [:]
for line in text.split(separator: "\n") where line.hasPrefix("RESULT ") {
  for pair in line.dropFirst(7).split(separator: " ") {
    let parts = pair.split(separator: "=")
    if parts.count == 2 { lua[String(parts[0])] = Double(parts[1]) }
  }
}
if let bare = lua["bare"], let update = lua["update"], let field = lua["field"] {
  progress.rows.append(["Lua loop, no update (x = i)", f(bare, 1)])
  progress.rows.append(["Lua loop, a table field store", f(field, 1)])
  progress.rows.append(["Lua loop, p.completed = i", f(update, 1)])
  progress.rows.append(["Lua: update loop / bare loop", f(update / bare) + "×"])
  progress.rows.append(["Lua: update loop / table store loop", f(update / field) + "×"])
  targets.check("p.completed = i / a table field store", update / field, atMost: 1.1)
} else {
  progress.rows.append(["Lua loop", "(progress.lua printed no RESULT line)"])
}
progress.print()

// 4. Start-up.
let starts = Measure.medians(
  21, [.init(argv: ["lua5.4", "-e", ""]), .init(argv: [taskrun, "-q", root + "/benchmarks/empty.lua"])])
let (lua54, started) = (starts[0], starts[1])
var startup = Table(title: "Start-up: an empty workflow (median of 21)", header: ["program", "ms"])
startup.rows.append(["lua5.4 -e ''", f(lua54.seconds * 1000)])
startup.rows.append(["taskrun empty.lua (static)", f(started.seconds * 1000)])
startup.rows.append(["taskrun (static) − lua5.4", f((started.seconds - lua54.seconds) * 1000)])
targets.check("start-up: taskrun − lua5.4 -e '' (ms)", (started.seconds - lua54.seconds) * 1000, atMost: 3)
if FileManager.default.isExecutableFile(atPath: dynamic) {
  let linked = Measure.median(21, [dynamic, "-q", root + "/benchmarks/empty.lua"])
  startup.rows.append(["taskrun empty.lua (Swift libraries linked dynamically)", f(linked.seconds * 1000)])
}
startup.print()

// 5. Parallel efficiency.
var parallel = Table(
  title: "Makespan of sleeping operations (each layer after the whole previous one)",
  header: ["graph", "ideal s", "makespan s", "makespan / ideal"])
for (layers, width, seconds) in [(4, jobs, 0.25), (8, jobs * 2, 0.1)] {
  let run = Measure.median(
    repeats,
    [
      taskrun, "-q", "-j\(jobs)", root + "/benchmarks/sleepy.lua", "--",
      "\(layers)", "\(width)", "\(seconds)"
    ])
  let ideal = Double(layers) * seconds * Double((width + jobs - 1) / jobs)
  let makespan = run.seconds - emptyTaskrun.seconds
  parallel.rows.append([
    "\(layers) layers × \(width), \(seconds) s each, -j\(jobs)", f(ideal), f(makespan, 3),
    f(makespan / ideal, 3)
  ])
  targets.check("makespan / ideal, \(layers) layers × \(width)", makespan / ideal, atMost: 1.02)
}
parallel.print()

// 6. The run store: a no-op run against ninja's, a first run's cost, the ETA and the order from history.
printRunStoreTables()
watchTable().print()

targets.print()
