// Scheduler+Control: the run as another process sees it (taskrun status, watch) and reaches it (cancel, pause, resume).

/// The run at one moment, for a view in another terminal.
public struct RunSnapshot: Sendable {
  public var progress: RunProgress
  public var elapsed: Double
  /// Paused as a whole: nothing new starts.
  public var paused: Bool
  /// The executing operations (at most the limit asked for), the longest running first.
  public var operations: [OperationSnapshot]
}

/// One executing operation in a `RunSnapshot`.
public struct OperationSnapshot: Sendable {
  public var name: String
  public var elapsed: Double
  public var paused: Bool
  public var progress: ProgressSnapshot?
}

/// What `taskrun cancel|pause|resume` asks for.
public enum ControlAction: String, Sendable, CaseIterable {
  case cancel, pause, resume
}

extension Scheduler {
  /// The run now: its progress and up to `limit` executing operations.
  public func snapshot(limit: Int = 50) -> RunSnapshot {
    let now = clock.now
    let shown = executing.filter { !$0.isGroup }.sorted { ($0.startTime ?? now) < ($1.startTime ?? now) }.prefix(limit)
    return RunSnapshot(
      progress: progressNow(at: now), elapsed: elapsed(at: now), paused: stopping.held,
      operations: shown.map { op in
        OperationSnapshot(
          name: op.name, elapsed: now - (op.startTime ?? now), paused: op.isPaused,
          progress: op.hasProgress ? op.snapshotProgress() : nil)
      })
  }

  /// Does `action` to the operation named `name` through its progress, as Finder cancels
  /// Safari's download (the progress's handlers fire; a progress that is not cancellable or
  /// pausable refuses), or with no name to the whole run: cancel ends it (like `os.exit`, with
  /// that reason), pause holds every start and pauses what executes, resume undoes that.
  /// Returns why it cannot, or nil.
  public func control(_ action: ControlAction, operation name: String?, by whom: String) -> String? {
    guard let name else {
      switch action {
      case .cancel:
        end(because: "cancelled by \(whom)")
      case .pause:
        stopping.held = true
        for op in executing where !op.isGroup { pause(op) }
      case .resume:
        stopping.held = false
        for op in executing where op.isPaused { resume(op) }
        for op in operations where op.isPaused && op.state != .executing { resume(op) }
      }
      return nil
    }
    let shown = TerminalText.escaped(name).replacing("\t", with: "\\t")
    guard let op = operation(named: name) else { return "no operation is named '\(shown)'" }
    if op.isFinished { return "'\(shown)' already finished (\(op.outcome?.rawValue ?? "finished"))" }
    let progress = op.progress
    switch action {
    case .cancel:
      guard progress.isCancellable else { return "the progress of '\(shown)' is not cancellable" }
      progress.cancel()
    case .pause:
      guard progress.isPausable else { return "the progress of '\(shown)' is not pausable" }
      progress.pause()
    case .resume:
      progress.resume()
    }
    return nil
  }
}
