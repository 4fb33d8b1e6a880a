// Floor: taskrun's no-op operations and live view against the floors they stand on, and targets.
import Foundation

/// No-op Lua operations against plain `lua5.4` running the same graph script with a stub
/// `operation` (benchmarks/floor.lua), in CPU time and in instructions, and how the cost per
/// operation grows with the graph.
@MainActor func floorTable() -> Table {
  var table = Table(
    title: "No-op operations against the Lua floor (lua5.4 + floor.lua on the same graphs.lua), CPU time",
    header: [
      "shape", "operations", "taskrun CPU µs/op", "Lua floor CPU µs/op", "taskrun / floor",
      "per-op CPU / at \(floorSizes[0])", "floor per-op CPU / at \(floorSizes[0])", "taskrun KB/op"
    ])
  let floor = root + "/benchmarks/floor.lua"
  for shape in Shape.allCases {
    // The floor's own growth beside taskrun's: what Lua alone spends more per operation on
    // a larger heap (see docs/performance.md on the growth rows).
    var base = Double.nan, floorBase = Double.nan
    for n in floorSizes {
      // The smallest graphs run for tens of milliseconds, where CPU time moves most, and they
      // are every growth ratio's base: three times the runs.
      let runs = Measure.medians(
        n == floorSizes[0] ? repeats * 3 : repeats,
        [
          .init(argv: [taskrun, "-q", "-j\(jobs)", graphs, "--", shape.rawValue, "\(n)", "lua"]),
          .init(argv: ["lua5.4", floor, graphs, shape.rawValue, "\(n)", "lua"])
        ])
      let (t, l) = (runs[0], runs[1])
      let tcpu = (t.cpu - emptyTaskrun.cpu) / Double(n) * 1e6, lcpu = (l.cpu - emptyLua.cpu) / Double(n) * 1e6
      if base.isNaN { (base, floorBase) = (tcpu, lcpu) }
      let kb = Double(t.peakKB - emptyTaskrun.peakKB) / Double(n)
      table.rows.append([
        shape.rawValue, "\(n)", f(tcpu), f(lcpu), f(tcpu / lcpu), f(tcpu / base), f(lcpu / floorBase), f(kb)
      ])
      targets.check("no-op \(shape.rawValue) \(n): CPU / Lua floor", tcpu / lcpu, atMost: 1.5)
      if n != floorSizes[0] {
        targets.check("no-op \(shape.rawValue) \(n): per-op CPU / at \(floorSizes[0])", tcpu / base, atMost: 1.3)
      }
      targets.check("no-op \(shape.rawValue) \(n): KB per operation", kb, atMost: 1.0)
    }
  }
  // Instructions, at one size (valgrind runs ~50× slower).
  let stripped = NSTemporaryDirectory() + "taskrun-bench-stripped"
  let n = 10_000
  if Measure.run(["strip", "--strip-debug", "-o", stripped, taskrun]).status == 0,
    let emptyT = Measure.instructions([stripped, "-q", root + "/benchmarks/empty.lua"]),
    let emptyL = Measure.instructions(["lua5.4", "-e", ""])
  {
    for shape in Shape.allCases {
      guard let t = Measure.instructions([stripped, "-q", "-j\(jobs)", graphs, "--", shape.rawValue, "\(n)", "lua"]),
        let l = Measure.instructions(["lua5.4", floor, graphs, shape.rawValue, "\(n)", "lua"])
      else { continue }
      let ratio = (t - emptyT) / (l - emptyL)
      table.rows.append([
        shape.rawValue, "\(n)", "\(Int((t - emptyT) / Double(n))) instr/op",
        "\(Int((l - emptyL) / Double(n))) instr/op", f(ratio), "", "", ""
      ])
      targets.check("no-op \(shape.rawValue) \(n): instructions / Lua floor", ratio, atMost: 1.5)
    }
  } else {
    table.rows.append(["(instructions: valgrind or strip missing)", "", "", "", "", "", "", ""])
  }
  try? FileManager.default.removeItem(atPath: stripped)
  return table
}

/// `--progress tty` into a pseudo-terminal against `--progress none` into the same terminal.
@MainActor func liveViewTable() -> Table {
  var table = Table(
    title: "The live view's cost: --progress tty against --progress none, both on an 80×24 pseudo-terminal",
    header: ["workload", "none CPU s", "tty CPU s", "tty / none CPU", "none wall s", "tty wall s"])
  guard let terminal = PseudoTerminal() else {
    table.rows.append(["(no pseudo-terminal)", "", "", "", "", ""])
    return table
  }
  for (label, n, kind) in [
    ("no-op operations", quick ? 1_000 : 10_000, "lua"), ("commands `true`", quick ? 200 : 1_000, "sh")
  ] {
    // A no-op run lasts tens of milliseconds, where CPU time moves most: three times the runs.
    let runs = Measure.medians(
      kind == "lua" ? repeats * 3 : repeats,
      ["none", "tty"].map { mode in
        .init(
          argv: [taskrun, "--progress", mode, "-j\(jobs)", graphs, "--", "independent", "\(n)", kind],
          terminal: terminal.path)
      })
    let (none, tty) = (runs[0], runs[1])
    let ratio = (tty.cpu - emptyTaskrun.cpu) / (none.cpu - emptyTaskrun.cpu)
    table.rows.append(["\(n) \(label)", f(none.cpu, 3), f(tty.cpu, 3), f(ratio), f(none.seconds, 3), f(tty.seconds, 3)])
    targets.check("live view, \(n) \(label): CPU / --progress none", ratio, atMost: 1.1)
  }
  return table
}

/// The targets, each with what this sitting measured.
struct Targets {
  var table = Table(title: "Targets (this sitting)", header: ["target", "measured", "limit", "met"])

  mutating func check(_ name: String, _ value: Double, atMost limit: Double) {
    table.rows.append([name, value.isNaN ? "-" : f(value), "≤ " + f(limit), value <= limit ? "yes" : "NO"])
  }

  func print() {
    table.print()
    let missed = table.rows.filter { $0[3] == "NO" }.count
    Swift.print("\n\(table.rows.count - missed) of \(table.rows.count) targets met")
  }
}
