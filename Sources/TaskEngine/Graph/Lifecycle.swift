// Lifecycle: an operation's legal states, and the one place that says what may still change.

/// An operation's life is `state` plus a few flags and times; these are the combinations the
/// scheduler produces (any other is a bug):
///
/// - `pending`, not `isScheduled`: declared; nothing has asked to run it. Everything may change.
/// - `pending`, `isScheduled`: waits for `unfinishedDependencies` to reach 0 (and, inside a
///   group, for the group to start). Then it is evaluated: skipped or cancelled (→ `finished`),
///   or its conditions run (`evaluatingConditions`, their produced dependencies first:
///   `conditionsProduced`), and once they hold (`conditionsHeld`) it becomes `ready`.
/// - `pending`, `hasStarted` (`attempt` ≥ 1): a failed attempt waits for its retry delay.
/// - `ready`: in its queue's ready heap, evaluated; `parked` while it waits for resources.
/// - `executing`: `hasStarted`, listed in `executing`, holding its resources; `slotYielded`
///   while its body waits for others; `isCancelled` once asked to stop; `timedOut` after its
///   timeout asked it to stop. A group is `executing` until its children have finished.
/// - `finished`: `outcome` and the finish time are set; nothing changes any more.
///
/// The predicates below are the only spellings of "may this still be changed?": a script may
/// change an operation only while the answer for that kind of change is yes.
extension OperationNode {
  /// Neither started (not even a failed attempt) nor finished: it may still be `ready`.
  /// A resource may still be required; a dependency may still be removed.
  @inline(__always) var mayStillChange: Bool { !hasStarted && !isFinished }

  /// A new dependency is possible only before the operation was evaluated against its
  /// dependencies (a `ready` one was: an edge added then would never be waited for).
  @inline(__always) var canTakeDependency: Bool { mayStillChange && state != .ready }

  /// A new condition is possible while pending and before its conditions were evaluated
  /// (a retry's next attempt does not evaluate them again).
  @inline(__always) var canTakeCondition: Bool { state == .pending && !evaluatingConditions && !conditionsHeld }

  /// A resource is taken when the operation starts: it may be required until then.
  @inline(__always) var canTakeResource: Bool { mayStillChange }

  /// A child runs only inside its group: it may join one only before it is part of the run.
  @inline(__always) var canJoinGroup: Bool { state == .pending && !isScheduled }

  /// Observers hear the start: one may be attached while the operation is pending.
  @inline(__always) public var canTakeObserver: Bool { state == .pending }
}
