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
}
