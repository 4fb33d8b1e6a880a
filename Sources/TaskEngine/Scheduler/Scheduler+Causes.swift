// Scheduler+Causes: which operation's outcome brought another's (a skip, a cancel, a group's failure).

extension Scheduler {
  /// One pass over `dependencies`: the most telling that did not succeed (failed, then
  /// cancelled, then a skip carrying a failure, then any), and whether any failed or was
  /// cancelled (not only the one a skip's message names: `when = "failed"` further down sees
  /// the failure through every skip).
  static func mostTelling(_ dependencies: [OperationNode]) -> (bad: OperationNode?, upstream: Bool) {
    var bad: OperationNode?, rank = 0, upstream = false
    for dependency in dependencies where dependency.outcome != .succeeded {
      let r =
        dependency.outcome == .failed ? 4 : dependency.outcome == .cancelled ? 3 : dependency.upstreamFailed ? 2 : 1
      if r > rank { (bad, rank) = (dependency, r) }
      if r >= 2 { upstream = true }
    }
    return (bad, upstream)
  }

  /// The operation whose outcome brought `op`'s, as `op` finishes (`FinishDetails.cause`):
  /// the group that ended it, the dependency it was skipped for, the failure that stopped
  /// the run before it started, the child a group failed or was cancelled for; nil when it
  /// failed by itself, was interrupted, or skipped by its own condition. Asked only for
  /// sinks that read `EventInterests.causes`: a finish that is not a success, at most one
  /// pass over its dependencies.
  func cause(of op: OperationNode) -> OperationNode? {
    if let group = op.group, group.isFinished, group.outcome != .succeeded { return group }  // its children end with it
    switch op.outcome {
    case .failed?: return op.errorKind == .child ? op.failedLeaf : nil
    case .skipped?:
      guard op.errorKind == .dependency, op.policy == .succeeded else { return nil }
      return Self.mostTelling(op.dependencies).bad
    case .cancelled?:
      if op.isGroup, let leaf = op.failedLeaf { return leaf }
      return op.errorKind == .cancelled ? stopping.stoppedBy : nil
    default: return nil
    }
  }
}
