// Scheduler+Watch: what `taskrun -w` asks of a run: waiting between cycles, and cancelling what a change concerns.

extension Scheduler {
  /// Between the cycles of `-w`: handles the loop's watchers, timers and signals until
  /// `done()` holds (a change settled, or Ctrl-C: `halted`).
  public func wait(until done: () -> Bool) {
    while !done() {
      let fired = loop.fireDue()
      if handleInbox() || fired { continue }
      if done() { return }
      loop.idle(until: loop.nextDeadline)
    }
  }

  /// Cancels the running operations that declare one of `paths` as an input (whole paths;
  /// `folder`: what their relative inputs are relative to). Returns their names.
  @discardableResult
  public func cancel(affectedBy paths: [String], folder: String) -> [String] {
    var names: [String] = []
    for op in executing where !op.isGroup && !op.isFinished {
      guard let path = paths.first(where: { WatchSet.declares(op, $0, folder: folder) }) else { continue }
      names.append(op.name)
      let shown = path.hasPrefix(folder + "/") ? String(path.dropFirst(folder.count + 1)) : path
      cancel(op, reason: "its input \(shown) changed")
    }
    return names
  }
}
