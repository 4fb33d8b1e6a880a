// Scheduler+Memory: what the run store changes in a run: operations finished without running, and commits.

extension Scheduler {
  /// An operation the run store found up to date (or `--resume` reused) finishes as a
  /// success without starting: its dependents go on as after a success.
  func finishUnrun(_ op: OperationNode) {
    memory?.reused(op, at: clock.now)
    finish(op, .succeeded)
  }

  /// What the run recorded is committed before the loop waits (and every 500 writes), so
  /// `kill -9` at any moment loses at most what was in flight.
  @inline(__always)
  func commitMemory(force: Bool = false) {
    guard let memory else { return }
    if force || memory.wantsCommit { memory.commit() }
  }

  /// Whether the live view should mark `op` as slow: running past the 90th percentile of its
  /// recorded durations (and at least 1 s past its median).
  public func isSlow(_ op: OperationNode, at now: Double) -> Bool {
    guard let memory, let start = op.startTime, let slow = memory.slowDuration(of: op.name) else { return false }
    let ran = now - start
    return ran > slow && ran > (memory.typicalDuration(of: op.name) ?? 0) + 1
  }
}
