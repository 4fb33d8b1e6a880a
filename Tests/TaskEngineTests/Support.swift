// Test support: bodies that take virtual time, and a scheduler on a manual clock.
import TaskEngine

/// A body that finishes after `seconds` of (virtual) time with `outcome`, logging its start.
final class TimedBody: OperationBody {
  let seconds: Double
  let outcome: Outcome
  let log: Log
  var timer: TimerID?

  init(_ seconds: Double = 1, _ outcome: Outcome = .succeeded, log: Log) {
    self.seconds = seconds
    self.outcome = outcome
    self.log = log
  }

  var summary: String { "timed \(seconds)" }

  func start(_ op: OperationNode, scheduler: Scheduler) {
    log.events.append("start \(op.name) @\(scheduler.elapsed)")
    timer = scheduler.after(seconds) { [outcome] in
      scheduler.finish(op, outcome, error: outcome == .failed ? "boom" : nil)
    }
  }

  func interrupt(_ op: OperationNode, scheduler: Scheduler, reason: String) {
    if let timer { scheduler.cancelTimer(timer) }
    scheduler.finish(op, .cancelled)
  }
}

final class Log {
  var events: [String] = []
  var starts: [String] { events.filter { $0.hasPrefix("start ") }.map { String($0.dropFirst(6).prefix { $0 != " " }) } }
}

/// Collects every event, as a reporter would.
final class EventRecorder: EventSink {
  var events: [RunEvent] = []
  func receive(_ event: RunEvent) { events.append(event) }
}

/// A scheduler on virtual time: sleeps cost nothing, timeouts are exact.
/// A scheduler on a manual clock. It shares the test process with other tests' commands, so
/// its second interrupt kills no strays (it would kill their commands).
func makeScheduler(jobs: Int = 1) -> (Scheduler, ManualClock) {
  let clock = ManualClock()
  let scheduler = Scheduler(clock: clock, jobs: jobs)
  scheduler.killsStrays = false
  return (scheduler, clock)
}

extension Scheduler {
  /// Schedules `ops` (all when empty) and runs until every scheduled operation finished.
  func runAll(_ ops: [OperationNode] = []) throws {
    try resolveNames()
    schedule(ops.isEmpty ? operations : ops)
    run(until: { self.operations.allSatisfy { !$0.isScheduled || $0.isFinished } })
  }

  func op(
    _ name: String, _ seconds: Double = 1, _ outcome: Outcome = .succeeded, log: Log,
    queue: WorkQueue? = nil, after: [OperationNode] = []
  ) throws -> OperationNode {
    let op = try makeOperation(name: name, queue: queue, body: TimedBody(seconds, outcome, log: log))
    for dependency in after { try addDependency(op, on: dependency) }
    return op
  }
}
