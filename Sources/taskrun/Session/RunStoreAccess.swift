// RunStoreAccess: opening the script's folder's run store for a run, a dry run or a report, and closing the run's record.
import FoundationEssentials
import Glibc
import LuaHost
import TaskEngine

/// How a command opens the run store of the folder its script is in (`.taskrun/`).
enum RunStoreAccess {
  /// The folder the script really is in (a link to it elsewhere does not move its store).
  static func workflowFolder(of script: String) -> String? {
    guard script != "-" else { return nil }
    return Confinement.parent(Confinement.resolved(ScriptHost.wholePath(script)))
  }

  /// The memory of a run of `script`: its store opened with the folder's lock (`writing`), or
  /// read only (a dry run, `why`). A store that cannot be opened is warned about (`warn`) and
  /// the run goes on without memory (nil); a store another run holds is an error (`Busy`).
  /// `waiting`: while another run of the script holds the store, called every 50 ms with its
  /// pid; the run waits as long as it returns true.
  static func memory(
    for script: String, writing: Bool, warn: (String) -> Void, waiting: (Int32?) -> Bool = { _ in false }
  ) throws -> RunMemory? {
    guard let folder = workflowFolder(of: script) else {
      if writing { warn("a script read from standard input has no folder: this run has no run store") }
      return RunMemory(store: nil, records: false)
    }
    do {
      let store = try RunStore(workflowFolder: folder, script: script, lock: writing, waiting: waiting)
      return RunMemory(store: store, records: writing)
    } catch let busy as RunStore.Busy {
      throw busy
    } catch {
      if writing || !"\(error)".hasPrefix("no run store") {
        warn(
          "\(error); this run \(writing ? "has" : "reads") no memory (nothing is up to date, nothing is recorded)"
            + (writing ? "; remove that file (or .taskrun/) to start a new store" : ""))
      }
      return RunMemory(store: nil, records: false)
    }
  }

  /// Seconds since 1970, as the store keeps times.
  static var now: Double { Date().timeIntervalSince1970 }

  /// The store's name for how a run with exit code `code` ended.
  static func outcome(code: Int32) -> String {
    switch code {
    case 0: "succeeded"
    case ExitCode.interrupted.rawValue: "interrupted"
    case ExitCode.usage.rawValue: "error"
    default: "failed"
    }
  }
}

/// The run's record in the store, ended once with the run's exit code: by `Session.finish`,
/// or by `Taskrun.leave` on any other way out (a usage error after the top level ran work).
final class RunRecording {
  let memory: RunMemory
  let keeping: Int
  unowned let scheduler: Scheduler
  private var ended = false
  /// The run's recording, for `Taskrun.leave` (on the scheduler's thread only).
  nonisolated(unsafe) static var current: RunRecording?

  init(memory: RunMemory, keeping: Int, scheduler: Scheduler) {
    (self.memory, self.keeping, self.scheduler) = (memory, keeping, scheduler)
    Self.current = self
  }

  func end(code: Int32) {
    guard !ended else { return }
    ended = true
    let summary = scheduler.summary
    memory.end(
      outcome: RunStoreAccess.outcome(code: code),
      counts: [
        "succeeded": summary.succeeded - summary.upToDate - summary.resumed, "failed": summary.failed,
        "cancelled": summary.cancelled, "skipped": summary.skipped, "up_to_date": summary.upToDate + summary.resumed,
        "resumed": summary.resumed
      ], summary: summary, keeping: keeping, at: RunStoreAccess.now)
  }
}
