// Queues: declaring many queues costs the same per queue at any count (it once scanned them all).
import Foundation

/// graphs.lua's `queues` shape (N queues, a no-op operation on each): CPU per queue, and how
/// it grows from the smallest size (quadratic declaration grew it about 4 times per doubling).
@MainActor func queueTable() -> Table {
  var table = Table(
    title: "Queues: N queues with an operation each (graphs.lua queues N noop), CPU time",
    header: ["queues", "CPU µs/queue", "per-queue CPU / at \(sizes[0])"])
  var base = Double.nan
  for n in sizes {
    let run = Measure.medians(repeats, [.init(argv: [taskrun, "-q", graphs, "--", "queues", "\(n)", "noop"])])[0]
    let cpu = (run.cpu - emptyTaskrun.cpu) / Double(n) * 1e6
    if base.isNaN { base = cpu }
    table.rows.append(["\(n)", f(cpu), f(cpu / base)])
    if n != sizes[0] { targets.check("queues \(n): per-queue CPU / at \(sizes[0])", cpu / base, atMost: 1.5) }
  }
  return table
}
