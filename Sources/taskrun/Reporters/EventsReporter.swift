// EventsReporter: --events FILE|-, one JSON object per line per event (the schema is in the README).
import FoundationEssentials
import Glibc
import TaskEngine

/// Writes the run's events as NDJSON. Fields may be added, never renamed.
final class EventsReporter: EventSink {
  /// The file, or standard error.
  private let file: ReportFile

  /// Every event, `op_ready` too.
  var interests: EventInterests { EventInterests.all.union(.readiness) }

  /// `-w`: the cycle every event belongs to (a field of each line), and the file stays open
  /// after a run's end for the next cycle's.
  var cycle: Int?

  /// `-w`: a cycle starts, because of what changed (`watch_cycle`).
  func cycleStarts(_ number: Int, changed: [String], at time: Double) {
    cycle = number
    var fields: [(String, JSON)] = [
      ("time", seconds(time)), ("event", .string("watch_cycle")), ("cycle", .int(number)),
      ("changed", .array(changed.prefix(1000).map(JSON.string)))
    ]
    if changed.count > 1000 { fields.append(("changed_more", .int(changed.count - 1000))) }
    file.append(JSON.object(fields).text + "\n")
  }

  /// `path` "-" means standard error.
  init(path: String, folder: Int32 = AT_FDCWD) throws {
    file = try ReportFile(path: path, what: "events", folder: folder)
  }

  func receive(_ event: RunEvent) {
    var fields: [(String, JSON)]
    switch event {
    case .runStart(let time):
      fields = [("time", seconds(time)), ("event", .string("run_start"))]
    case .operationStart(let time, let name, let attempt, let reason, let group, _, let sandbox, _):
      fields = [
        ("time", seconds(time)), ("event", .string("op_start")), ("operation", .string(name)),
        ("attempt", .int(attempt))
      ]
      if let group { fields.append(("group", .string(group))) }
      if let reason { fields += [("after", .string(reason.after)), ("because", Self.because(reason))] }
      if let sandbox, !sandbox.isEmpty { fields.append(("sandbox", GraphPicture.json(sandbox))) }
    case .operationFinish(let time, let name, let outcome, let duration, let details):
      let (error, kind) = (details?.error, details?.errorKind)
      fields = [
        ("time", seconds(time)), ("event", .string("op_finish")), ("operation", .string(name)),
        ("outcome", .string(outcome == .succeeded ? details?.reuse?.outcomeName ?? "succeeded" : outcome.rawValue)),
        ("duration", seconds(duration)),
        ("error", error.map(JSON.string) ?? .null), ("error_kind", kind.map { .string($0.rawValue) } ?? .null)
      ]
      if let why = details?.why { fields.append(("why", .string(why))) }
    case .output(let time, let name, let stream, let text):
      fields = [
        ("time", seconds(time)), ("event", .string("output")), ("operation", .string(name)),
        ("stream", .string(stream.rawValue)), ("text", .string(text))
      ]
    case .runProgress(let time, let progress):
      let finished = progress.done + progress.failed
      fields = [
        ("time", seconds(time)), ("event", .string("progress")),
        ("completed", .int(finished)), ("total", .int(finished + progress.running + progress.pending)),
        ("fraction", .number((progress.fraction * 1e4).rounded() / 1e4)),
        ("description", .string(ProgressLanguage.current.percentCompleted(Int(progress.fraction * 100)))),
        ("running", .int(progress.running)), ("pending", .int(progress.pending)),
        ("failed", .int(progress.failed)), ("cancelled", .int(progress.cancelled)),
        ("stopping", .bool(progress.stopping)), ("eta", progress.eta.map(seconds) ?? .null)
      ]
    case .operationProgress(let time, let name, let p):
      fields = [
        ("time", seconds(time)), ("event", .string("progress")), ("operation", .string(name)),
        ("completed", .int(Int(p.completed))), ("total", .int(Int(p.total))),
        ("fraction", .number((p.fraction * 1e4).rounded() / 1e4)),
        ("indeterminate", .bool(p.indeterminate)),
        ("description", .string(p.description)),
        ("additional_description", .string(p.additionalDescription)), ("paused", .bool(p.paused))
      ]
      if !p.userInfo.isEmpty {
        fields.append(
          ("user_info", .object(p.userInfo.sorted { $0.key < $1.key }.map { ($0.key, Self.json($0.value)) })))
      }
    case .message(let time, let operation, let text, _):
      fields = [
        ("time", seconds(time)), ("event", .string("print")),
        ("operation", operation.map(JSON.string) ?? .null), ("text", .string(text))
      ]
    case .activity(let time, let label, let count):
      fields = [
        ("time", seconds(time)), ("event", .string("activity")), ("label", .string(label)),
        ("count", .int(count))
      ]
    case .operationRetry(let time, let name, let attempt, let error, let delay):
      fields = [
        ("time", seconds(time)), ("event", .string("op_retry")), ("operation", .string(name)),
        ("attempt", .int(attempt)), ("error", .string(error)), ("delay", seconds(delay))
      ]
    case .prompt(let time, let text):
      fields = [("time", seconds(time)), ("event", .string("prompt")), ("text", text.map(JSON.string) ?? .null)]
    case .remoteState(let time, let name, let state):
      fields = [
        ("time", seconds(time)), ("event", .string("job")), ("operation", .string(name)),
        ("executor", .string(state.executor)), ("job_id", .string(state.job)),
        ("state", .string(state.queued ? "queued" : "running")),
        ("reason", state.reason.map(JSON.string) ?? .null), ("node", state.node.map(JSON.string) ?? .null)
      ]
    case .operationChange(let time, let name, let change):
      let head: [(String, JSON)] = [("time", seconds(time))]
      let tail: [(String, JSON)] = [("operation", .string(name))]
      switch change {
      case .ready: fields = head + [("event", .string("op_ready"))] + tail
      case .paused: fields = head + [("event", .string("op_pause"))] + tail
      case .resumed: fields = head + [("event", .string("op_resume"))] + tail
      case .cancelRequested(let reason):
        fields = head + [("event", .string("op_cancel"))] + tail + [("reason", .string(reason))]
      }
    case .queueChange(let time, let name, let change):
      fields = [("time", seconds(time))]
      switch change {
      case .suspended: fields += [("event", .string("queue_suspend")), ("queue", .string(name))]
      case .resumed: fields += [("event", .string("queue_resume")), ("queue", .string(name))]
      case .limit(let limit):
        fields += [("event", .string("queue_limit")), ("queue", .string(name)), ("max_concurrent", .int(limit))]
      }
    case .tick:
      return
    case .successes:
      return event.finishes.forEach(receive)
    case .runFinish(let time, let summary):
      fields = [
        ("time", seconds(time)), ("event", .string("run_finish")),
        ("succeeded", .int(summary.succeeded)), ("failed", .int(summary.failed)),
        ("cancelled", .int(summary.cancelled)), ("skipped", .int(summary.skipped)),
        ("interrupted", .bool(summary.interrupted)), ("ended", summary.ended.map(JSON.string) ?? .null),
        ("critical_path", .array(summary.criticalPath.map { .string($0.name) })),
        ("critical_path_because", .array(summary.criticalPath.map { $0.reason.map(Self.because) ?? .null }))
      ]
    }
    if let cycle { fields.append(("cycle", .int(cycle))) }
    var line = JSON.object(fields).text
    line += "\n"
    file.append(line)
    if case .runFinish = event, cycle == nil { file.close() }
  }

  static func json(_ value: ProgressNode.InfoValue) -> JSON {
    switch value {
    case .text(let text): .string(text)
    case .number(let number): .number(number)
    case .flag(let flag): .bool(flag)
    }
  }

  /// "dependency", "queue main", "resource mutex 'm'", "condition logged in", …
  static func because(_ reason: StartReason) -> JSON {
    .string(reason.kind + (reason.detail.map { " " + $0 } ?? ""))
  }
}

/// Seconds rounded to microseconds, so lines stay short.
func seconds(_ value: Double) -> JSON { .number((value * 1e6).rounded() / 1e6) }

struct ReporterError: Error, CustomStringConvertible {
  let description: String
  init(_ description: String) { self.description = description }
}
