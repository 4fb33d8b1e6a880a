// TraceReporter: --trace FILE, Chrome trace-event JSON (opens in Perfetto and chrome://tracing).
import Foundation
import TaskEngine

/// One complete ("X") event per operation on lanes that show the parallelism, a counter of
/// running operations, and lane names; written when the run finishes.
final class TraceReporter: EventSink {
  private let path: String
  private var events: [JSON] = []
  private var lanes: [Bool] = []                        // busy lanes
  private var open: [String: (lane: Int, start: Double)] = [:]

  init(path: String) throws {
    guard FileManager.default.createFile(atPath: path, contents: nil) else {
      throw ReporterError("cannot write a trace to '\(path)'")
    }
    self.path = path
  }

  private func micro(_ seconds: Double) -> JSON { .number((seconds * 1e6).rounded()) }

  private func counter(_ time: Double) {
    events.append(.object([("name", .string("running")), ("ph", .string("C")), ("ts", micro(time)),
                           ("pid", .int(1)), ("args", .object([("operations", .int(open.count))]))]))
  }

  func receive(_ event: RunEvent) {
    switch event {
    case .operationStart(let time, let name, _, _):
      let lane = lanes.firstIndex(of: false) ?? { lanes.append(false); return lanes.count - 1 }()
      lanes[lane] = true
      open[name] = (lane, time)
      counter(time)
    case .operationFinish(let time, let name, let outcome, _, let error, _, _, _):
      close(name, at: time, outcome: outcome.rawValue, error: error)
    case .operationRetry(let time, let name, let attempt, let error, _):
      close(name, at: time, outcome: "failed, retrying", error: error, title: "\(name) (attempt \(attempt))")
    case .activity(let time, let label, let count):
      events.append(.object([("name", .string("activity: \(label)")), ("ph", .string("C")), ("ts", micro(time)),
                             ("pid", .int(1)), ("args", .object([("count", .int(count))]))]))
    case .runFinish:
      write()
    case .runStart, .output, .message, .runProgress, .operationProgress, .prompt, .tick:
      break
    }
  }

  /// Ends the complete event of an operation's current attempt.
  private func close(_ name: String, at time: Double, outcome: String, error: String?, title: String? = nil) {
    guard let (lane, start) = open.removeValue(forKey: name) else { return }  // never started
    lanes[lane] = false
    var args: [(String, JSON)] = [("outcome", .string(outcome))]
    if let error { args.append(("error", .string(error))) }
    events.append(.object([("name", .string(title ?? name)), ("cat", .string(outcome)), ("ph", .string("X")),
                           ("ts", micro(start)), ("dur", micro(time - start)), ("pid", .int(1)),
                           ("tid", .int(lane + 1)), ("args", .object(args))]))
    counter(time)
  }

  private func write() {
    var all: [JSON] = [.object([("name", .string("process_name")), ("ph", .string("M")), ("pid", .int(1)),
                                ("args", .object([("name", .string("taskrun"))]))])]
    for lane in lanes.indices {
      all.append(.object([("name", .string("thread_name")), ("ph", .string("M")), ("pid", .int(1)),
                          ("tid", .int(lane + 1)), ("args", .object([("name", .string("lane \(lane + 1)"))]))]))
    }
    let document = JSON.object([("traceEvents", .array(all + events)), ("displayTimeUnit", .string("ms"))])
    if !FileManager.default.createFile(atPath: path, contents: Data(document.text.utf8)) {
      FileHandle.standardError.write(Data("taskrun: cannot write the trace to '\(path)'\n".utf8))
    }
  }
}
