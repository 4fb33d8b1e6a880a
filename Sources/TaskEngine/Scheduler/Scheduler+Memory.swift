// Scheduler+Memory: what the run store changes in a run: operations finished without running, and commits.

extension Scheduler {
  /// An operation the run store found up to date (or `--resume` reused) finishes as a
  /// success without starting: its dependents go on as after a success.
  func finishUnrun(_ op: OperationNode) {
    memory?.reused(op, at: clock.now)
    finish(op, .succeeded)
  }

  /// What the run recorded is committed when the loop is about to wait, at most every
  /// `RunMemory.commitInterval` seconds (a timer commits the rest), and every 500 writes: a
  /// `kill -9` at any moment loses at most what finished in the last 50 ms. A commit per
  /// wait was a write to the WAL per command, 10% of a run of 1,000 `true`.
  @inline(__always)
  func commitMemory(beforeWaiting: Bool = false) {
    guard let memory, memory.hasUncommitted else { return }
    if memory.wantsCommit { return memory.commit(at: clock.now) }
    guard beforeWaiting else { return }
    let due = memory.lastCommit + RunMemory.commitInterval
    if clock.now >= due { return memory.commit(at: clock.now) }
    if !memory.commitScheduled {
      memory.commitScheduled = true
      after(due - clock.now) { [unowned self] in
        self.memory?.commitScheduled = false
        self.memory?.commit(at: self.clock.now)
      }
    }
  }
}
