// RemoteStart: when a cluster job started running, for its operation's duration.

extension Scheduler {
  /// The moment `op`'s job started running: now, less how long the executor says it has
  /// run already (its start mark), never before the operation itself started.
  func remoteStart(of op: OperationNode, _ state: RemoteState) -> Double {
    let now = clock.now
    guard let ran = state.runningFor, ran.isFinite, ran > 0 else { return now }
    let start = now - ran
    guard let started = op.startTime else { return start }
    return Swift.max(started, start)
  }
}
