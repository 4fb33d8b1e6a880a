// Cascades: a failure, skip, stop or Ctrl-C spreading through a long chain or deep nesting, timed and weighed.
import Foundation

/// The sizes: chains up to 1,000,000 operations, nesting up to 100,000 groups.
let cascadeChainSizes = quick ? [10_000, 100_000] : [10_000, 100_000, 1_000_000]
let cascadeNestedSizes = quick ? [1_000, 10_000] : [10_000, 100_000]

/// Each case of benchmarks/cascades.lua against the same graph succeeding: wall time, peak
/// memory, cost per operation, and how that cost grows with the size (a cascade that recursed
/// crashed past ~8,000 links; one that walked the nesting per group grew quadratically).
@MainActor func cascadeTable() -> Table {
  var table = Table(
    title: "Cascades (benchmarks/cascades.lua): a failure, skip, stop or Ctrl-C through a chain or nested groups",
    header: [
      "case", "operations", "exit", "wall s", "µs/op", "/ succeeding", "µs/op / at smallest",
      "peak MB", "KB/op"
    ])
  let script = root + "/benchmarks/cascades.lua"
  let cases: [(shape: String, how: String, exit: Int32)] = [
    ("chain", "ok", 0), ("chain", "fail", 1), ("chain", "when", 0), ("chain", "stop", 1), ("chain", "interrupt", 130),
    ("nested", "ok", 0), ("nested", "fail", 1), ("nested", "skip", 1), ("nested", "interrupt", 130)
  ]
  var succeeding: [String: Double] = [:]  // shape and size: the ok case's µs/op
  for (shape, how, exit) in cases {
    let sizes = shape == "chain" ? cascadeChainSizes : cascadeNestedSizes
    var base = Double.nan
    for n in sizes {
      // Not Measure.medians: most of these exit non-zero on purpose.
      let runs = (0..<(quick ? 1 : 3)).map { _ in
        Measure.run([taskrun, "-q", "-j2", script, "--", "\(shape)-\(how)", "\(n)"], limit: 300)
      }
      let run = runs.sorted { $0.seconds < $1.seconds }[runs.count / 2]
      let status = runs.first { $0.status != exit }?.status ?? exit
      // The stop's first operation runs 1 s (the failure comes while it runs): not the cascade's.
      let us = (run.seconds - emptyTaskrun.seconds - (how == "stop" ? 1 : 0)) / Double(n) * 1e6
      if how == "ok" { succeeding["\(shape) \(n)"] = us }
      if base.isNaN { base = us }
      let ratio = succeeding["\(shape) \(n)"].map { us / $0 } ?? .nan
      let peak = runs.map(\.peakKB).max() ?? 0
      table.rows.append([
        "\(shape)-\(how)", "\(n)", "\(status)", f(run.seconds), f(us), how == "ok" ? "-" : f(ratio),
        f(us / base), f(Double(peak) / 1024, 0), f(Double(peak - emptyTaskrun.peakKB) / Double(n))
      ])
      targets.check("cascade \(shape)-\(how) \(n): exits \(exit) (0: it did)", status == exit ? 0 : 1, atMost: 0)
      // Linear: the cost per operation does not grow with the size (the largest against the
      // smallest; a recursive cascade crashed, a per-group walk of the nesting was quadratic).
      if n != sizes[0] { targets.check("cascade \(shape)-\(how) \(n): µs/op / at \(sizes[0])", us / base, atMost: 1.5) }
    }
  }
  return table
}
