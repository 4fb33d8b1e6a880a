// TraceReporter: --trace FILE, Chrome trace-event JSON (opens in Perfetto and chrome://tracing).
import FoundationEssentials
import Glibc
import TaskEngine

/// One complete ("X") event per operation attempt on lanes that show the parallelism; a
/// group is a process of its own (its slice, then its children's lanes); an arrow (flow)
/// from what each operation waited for last to its start; the critical path marked; a
/// counter of running operations. The file is valid JSON from the start (empty until the
/// run ends), so a script that does not load still leaves a trace to open.
final class TraceReporter: EventSink {
  private let file: ReportFile
  private var events: [JSON] = []
  /// Processes: 1 is the run; each group gets the next number.
  private var processes: [String: Int] = [:]
  private var processNames: [(Int, String)] = [(1, "taskrun")]
  /// Busy lanes per process.
  private var lanes: [Int: [Bool]] = [:]
  /// Where each operation's current (or last) slice is, for its arrows.
  private var placed: [String: Place] = [:]
  private var running = 0
  private var flows = 0
  /// Each slice: its place in `events` and what it was made of (the critical path marks it later).
  private var slices:
    [(index: Int, name: String, title: String, outcome: String, place: Place, args: [(String, JSON)])] = []

  private struct Place {
    var pid: Int, tid: Int, start: Double
    var end: Double?
  }

  /// `-w`: each cycle's trace replaces the one before, and the file stays open for the next.
  var keepsOpen = false

  init(path: String, folder: Int32 = AT_FDCWD) throws {
    file = try ReportFile(path: path, what: "the trace", folder: folder)
    if file.isRegular { file.replace(with: Self.document([]).text) }  // a pipe gets one document, at the end
  }

  private static func document(_ events: [JSON]) -> JSON {
    .object([("traceEvents", .array(events)), ("displayTimeUnit", .string("ms"))])
  }

  private func micro(_ seconds: Double) -> JSON { .number((seconds * 1e6).rounded()) }

  private func counter(_ time: Double) {
    events.append(
      .object([
        ("name", .string("running")), ("ph", .string("C")), ("ts", micro(time)),
        ("pid", .int(1)), ("args", .object([("operations", .int(running))]))
      ]))
  }

  func receive(_ event: RunEvent) {
    switch event {
    case .operationStart(let time, let name, _, let reason, let group, let isGroup, _, _):
      let pid = group.map(process) ?? 1
      if isGroup {  // a group: its own slice on lane 0 of its process
        placed[name] = Place(pid: process(name), tid: 0, start: time)
      } else {
        var busy = lanes[pid, default: []]
        let lane =
          busy.firstIndex(of: false)
          ?? {
            busy.append(false); return busy.count - 1
          }()
        busy[lane] = true
        lanes[pid] = busy
        placed[name] = Place(pid: pid, tid: lane + 1, start: time)
        running += 1
        counter(time)
      }
      if let reason { arrow(reason, to: name, at: time) }
    case .operationFinish(let time, let name, let outcome, _, let details):
      close(name, at: time, outcome: outcome.rawValue, error: details?.error)
    case .successes:
      event.finishes.forEach(receive)
    case .operationRetry(let time, let name, let attempt, let error, _):
      close(name, at: time, outcome: "failed, retrying", error: error, title: "\(name) (attempt \(attempt))")
    case .activity(let time, let label, let count):
      events.append(
        .object([
          ("name", .string("activity: \(label)")), ("ph", .string("C")), ("ts", micro(time)),
          ("pid", .int(1)), ("args", .object([("count", .int(count))]))
        ]))
    case .runFinish(_, let summary):
      write(critical: summary.criticalPath.map(\.name))
    case .runStart, .output, .message, .runProgress, .operationProgress, .prompt, .tick, .remoteState,
      .operationChange, .queueChange:
      break
    }
  }

  /// The process that shows group `name` (made when its first child starts, or the group).
  private func process(_ name: String) -> Int {
    if let pid = processes[name] { return pid }
    let pid = processNames.count + 1
    processes[name] = pid
    processNames.append((pid, "group \(name)"))
    return pid
  }

  /// A flow from the slice of what `name` started after to `name`'s start.
  private func arrow(_ reason: StartReason, to name: String, at time: Double) {
    guard let from = placed[reason.after], let to = placed[name] else { return }
    flows += 1
    let label = reason.kind + (reason.detail.map { " " + $0 } ?? "")
    // The arrow leaves the cause's slice at its end (or now, for a producer still running).
    let leave = max(from.start, min(from.end.map { $0 - 1e-6 } ?? time, time))
    events.append(
      .object([
        ("name", .string(label)), ("cat", .string("started after")), ("ph", .string("s")),
        ("id", .int(flows)), ("ts", micro(leave)), ("pid", .int(from.pid)), ("tid", .int(from.tid))
      ]))
    events.append(
      .object([
        ("name", .string(label)), ("cat", .string("started after")), ("ph", .string("f")),
        ("bp", .string("e")), ("id", .int(flows)), ("ts", micro(time)),
        ("pid", .int(to.pid)), ("tid", .int(to.tid))
      ]))
  }

  /// Ends the complete event of an operation's current attempt.
  private func close(_ name: String, at time: Double, outcome: String, error: String?, title: String? = nil) {
    guard var place = placed[name], place.end == nil else { return }  // never started
    place.end = time
    placed[name] = place
    var args: [(String, JSON)] = [("outcome", .string(outcome))]
    if let error { args.append(("error", .string(error))) }
    slices.append((events.count, name, title ?? name, outcome, place, args))
    events.append(slice(title ?? name, outcome, place, args))
    if place.tid > 0 {
      lanes[place.pid]?[place.tid - 1] = false
      running -= 1
      counter(time)
    }
  }

  private func slice(_ title: String, _ outcome: String, _ place: Place, _ args: [(String, JSON)]) -> JSON {
    .object([
      ("name", .string(title)), ("cat", .string(outcome)), ("ph", .string("X")),
      ("ts", micro(place.start)), ("dur", micro((place.end ?? place.start) - place.start)),
      ("pid", .int(place.pid)), ("tid", .int(place.tid)), ("args", .object(args))
    ])
  }

  private func write(critical: [String]) {
    var all: [JSON] = processNames.map { pid, name in
      .object([
        ("name", .string("process_name")), ("ph", .string("M")), ("pid", .int(pid)),
        ("args", .object([("name", .string(name))]))
      ])
    }
    for (pid, _) in processNames where pid > 1 {
      all.append(
        .object([
          ("name", .string("thread_name")), ("ph", .string("M")), ("pid", .int(pid)),
          ("tid", .int(0)), ("args", .object([("name", .string("group"))]))
        ]))
    }
    for (pid, busy) in lanes.sorted(by: { $0.key < $1.key }) {
      for lane in busy.indices {
        all.append(
          .object([
            ("name", .string("thread_name")), ("ph", .string("M")), ("pid", .int(pid)),
            ("tid", .int(lane + 1)), ("args", .object([("name", .string("lane \(lane + 1)"))]))
          ]))
      }
    }
    // The critical path: the last slice of each of its operations carries its step number.
    var marked = events
    let steps = Dictionary(critical.enumerated().map { ($1, $0 + 1) }, uniquingKeysWith: { first, _ in first })
    var done: Set<String> = []
    for record in slices.reversed() where steps[record.name] != nil && done.insert(record.name).inserted {
      marked[record.index] = slice(
        record.title, record.outcome, record.place,
        record.args + [("critical_path_step", .int(steps[record.name]!))])
    }
    file.replace(with: Self.document(all + marked).text)
    if keepsOpen {  // the next cycle starts a trace of its own
      (events, processes, processNames, lanes, placed, running, flows, slices) =
        ([], [:], [(1, "taskrun")], [:], [:], 0, 0, [])
    } else {
      file.close()
    }
  }
}
