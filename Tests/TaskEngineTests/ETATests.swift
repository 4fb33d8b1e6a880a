// The ETA on a manual clock, against schedules whose remaining time is known at every tick.
import Testing

@testable import TaskEngine

/// A body that reports its own progress: `fraction(t)` every hundredth of a second, and
/// finishes after `seconds`.
final class ProgressingBody: OperationBody {
  let seconds: Double
  let fraction: (Double) -> Double
  init(_ seconds: Double, fraction: @escaping (Double) -> Double) {
    (self.seconds, self.fraction) = (seconds, fraction)
  }
  var summary: String { "progressing" }
  func start(_ op: OperationNode, scheduler: Scheduler) {
    op.progress.total = 1000
    let started = scheduler.elapsed
    func step() {
      let t = scheduler.elapsed - started
      op.progress.completed = Int64(min(1, fraction(t)) * 1000)
      if t < seconds { _ = scheduler.after(0.01) { step() } }
    }
    step()
    _ = scheduler.after(seconds) { scheduler.finish(op, .succeeded) }
  }
  func interrupt(_ op: OperationNode, scheduler: Scheduler, reason: String) { scheduler.finish(op, .cancelled) }
}

@Suite struct ETATests {
  /// (time, ETA) of every progress tick of a run.
  func etas(jobs: Int, _ build: (Scheduler, Log) throws -> Void) throws -> [(time: Double, eta: Double?)] {
    let (s, _) = makeScheduler(jobs: jobs)
    s.tickInterval = 0.1
    let recorder = EventRecorder()
    s.sinks.append(recorder)
    try build(s, Log())
    try s.runAll()
    return recorder.events.compactMap { event in
      guard case .runProgress(let time, let progress) = event else { return nil }
      return (time, progress.eta)
    }
  }

  @Test func aSteadyRunCountsDownWithoutJumps() throws {
    // Twelve one-second operations at -j2 end at 6 s; running ones count for their time.
    let ticks = try etas(jobs: 2) { s, log in for i in 1...12 { _ = try s.op("sleep \(i)", 1, log: log) } }
    let known = ticks.filter { $0.time >= 1 && $0.time < 5.95 }
    #expect(!known.isEmpty && known.allSatisfy { $0.eta != nil })
    for tick in known { #expect(abs(tick.eta! - (6 - tick.time)) < 0.05, "at \(tick.time): \(tick.eta!)") }
    for (a, b) in zip(known, known.dropFirst()) { #expect(b.eta! <= a.eta! + 1e-9, "it never rises: \(a) then \(b)") }
    #expect(
      ticks.filter { $0.time < 0.95 }.allSatisfy { $0.eta == nil }, "before anything finished there is nothing to go by"
    )
  }

  @Test func weightsNineToOneFollowTheHeavyOperation() throws {
    // Weight 9 takes 9 s, weight 1 takes 1 s, side by side: after 1 s, 8 s are left.
    let ticks = try etas(jobs: 2) { s, log in
      try s.op("heavy", 9, log: log).weight = 9
      _ = try s.op("light", 1, log: log)
    }
    for tick in ticks where tick.time >= 1 && tick.time < 8.95 {
      #expect(
        tick.eta.map { abs($0 - (9 - tick.time)) < 0.05 } == true, "at \(tick.time): \(String(describing: tick.eta))")
    }
  }

  @Test func aStragglerThatReportsProgressIsFollowed() throws {
    // Nine one-second operations on one slot, a ten-second one that reports its progress on
    // the other: the run ends at 10 s.
    let ticks = try etas(jobs: 2) { s, _ in
      _ = try s.makeOperation(name: "straggler", body: ProgressingBody(10) { $0 / 10 })
      for i in 1...9 { _ = try s.makeOperation(name: "quick \(i)", body: TimedBody(1, log: Log())) }
    }
    for tick in ticks where tick.time >= 1 && tick.time < 9.9 {
      #expect(
        tick.eta.map { abs($0 - (10 - tick.time)) < 0.25 } == true, "at \(tick.time): \(String(describing: tick.eta))")
    }
  }

  @Test func aSilentStragglerKeepsAnETAAboveZero() throws {
    // It says nothing about its progress and runs late: the ETA stays positive, and grows
    // once only it is left, rather than sitting at 0:00.
    let ticks = try etas(jobs: 2) { s, log in
      _ = try s.op("straggler", 10, log: log)
      for i in 1...9 { _ = try s.op("quick \(i)", 1, log: log) }
    }
    let late = ticks.filter { $0.time >= 9.5 && $0.time < 9.95 }
    #expect(ticks.filter { $0.time >= 1 && $0.time < 9.95 }.allSatisfy { ($0.eta ?? 0) > 0 })
    #expect(late.count >= 2 && late.last!.eta! > late.first!.eta!, "\(late)")
  }

  @Test func aStallMakesTheETARise() throws {
    // Progress at 10% a second up to 50% at 5 s, then nothing for 10 s: at the steady pace
    // the ETA is the 5 s left; during the stall it grows instead of running out.
    let ticks = try etas(jobs: 1) { s, _ in
      _ = try s.makeOperation(
        name: "stalls", body: ProgressingBody(20) { t in t < 5 ? t / 10 : (t < 15 ? 0.5 : 0.5 + (t - 15) / 10) })
    }
    for tick in ticks where tick.time >= 2 && tick.time < 5 {
      #expect(
        tick.eta.map { abs($0 - (10 - tick.time)) < 0.6 } == true, "at \(tick.time): \(String(describing: tick.eta))")
    }
    let stall = ticks.filter { $0.time >= 7 && $0.time < 15 }.compactMap(\.eta)
    #expect(stall.count > 10 && stall.last! > stall.first! + 3, "\(stall)")
  }
}
