// Cascades: what a finish sets off (children, handlers, the fail-fast stop, dependents) as a worklist.

/// The finishes being carried out, and whether a drain is under way (a nested finish then
/// only pushes its frame).
struct Cascade {
  var frames: [CascadeFrame] = []
  var running = false
  /// The finish handlers of the frames in their `handlers` phase, innermost last (a frame's
  /// list is taken when its phase begins and dropped when it ends: frames end in LIFO order).
  var handlerLists: [[(OperationNode) -> Void]] = []
}

/// One finished operation whose consequences are being carried out, and how far they got.
/// A finish used to call them directly (finish → evaluate → finish …, a group's settle →
/// finish → settle …), one stack frame per link: a failure, skip or cancel spreading through
/// a chain of ~8,000 operations or 10,000 nested groups overflowed the thread's stack. The
/// frames now live in `Scheduler.cascade.frames`, an array, and are carried out in the same
/// order the recursion had (depth first, each consequence complete before the next), so
/// outcomes and events are unchanged. A frame holds no reference that counts (its handlers
/// are in `Cascade.handlerLists`): pushing and popping one copies plain bytes.
struct CascadeFrame {
  enum Phase { case children, handlers, stop, dependents }
  /// Unretained: the scheduler's `operations` holds every operation while it runs.
  unowned(unsafe) let op: OperationNode
  var phase: Phase
  /// Whether this frame's handlers were taken into `Cascade.handlerLists`.
  var listed = false
  var index = 0
}

extension Scheduler {
  /// Carries out what `op`'s finish sets off: at once when nothing else is being carried out,
  /// else when the finish that is (or the `completely` that is) comes back to it.
  func carryOut(finishOf op: OperationNode) {
    let group = op.isGroup && op.outcome != .succeeded && !op.children.isEmpty
    let handlers = op.extrasStorage?.finishHandlers.isEmpty == false
    // The stop state is read after a failure only: a finish that did not fail copies nothing.
    let stops = op.outcome == .failed && stopping.stopsAfter(op, keepGoing: keepGoing)
    // Most finishes set off nothing (a leaf, no one waiting): no frame. Most others only
    // evaluate dependents: the frame starts there.
    if !group && !handlers && !stops && op.dependents.isEmpty { return }
    let frame = CascadeFrame(op: op, phase: group ? .children : handlers ? .handlers : stops ? .stop : .dependents)
    guard cascade.running else {
      cascade.running = true
      cascade.frames.append(frame)
      drainCascade(downTo: cascade.frames.count - 1)
      cascade.running = false
      return
    }
    cascade.frames.append(frame)
  }

  /// Runs `body` (a cancel, say) and everything it sets off before returning, even from inside
  /// a cascade: a loop that cancels operations one by one sees the first's consequences (its
  /// dependents skipped) before it reaches the next. Nests only as deep as such loops do.
  func completely(_ body: () -> Void) {
    let base = cascade.frames.count
    let outer = cascade.running
    cascade.running = true
    body()
    drainCascade(downTo: base)
    cascade.running = outer
  }

  private func drainCascade(downTo base: Int) {
    while cascade.frames.count > base { stepCascade() }
  }

  /// One consequence of the top frame; what it finishes goes on top and is carried out first.
  private func stepCascade() {
    let top = cascade.frames.count - 1
    let op = cascade.frames[top].op
    switch cascade.frames[top].phase {
    case .children:
      // Children that never got to run end as their group did.
      let children = op.children
      let outcome: Outcome = op.outcome == .skipped ? .skipped : .cancelled
      while cascade.frames[top].index < children.count {
        let child = children[cascade.frames[top].index]
        cascade.frames[top].index += 1
        guard child.mayStillChange else { continue }
        child.isScheduled = true
        ledger.scheduled(child)
        finish(child, outcome, error: "group '\(op.name)' \(op.outcome!.rawValue)")
        return
      }
      cascade.frames[top].phase = .handlers
      cascade.frames[top].index = 0
    case .handlers:
      if !cascade.frames[top].listed {
        cascade.frames[top].listed = true
        cascade.handlerLists.append(op.finishHandlers)
        op.finishHandlers = []
      }
      let list = cascade.handlerLists.count - 1
      if cascade.frames[top].index < cascade.handlerLists[list].count {
        let handler = cascade.handlerLists[list][cascade.frames[top].index]
        cascade.frames[top].index += 1
        return handler(op)
      }
      cascade.handlerLists.removeLast()
      cascade.frames[top].phase = .stop
    case .stop:
      cascade.frames[top].phase = .dependents
      cascade.frames[top].index = 0
      if stopping.stopsAfter(op, keepGoing: keepGoing) {
        stopping.stop(after: op)  // its reason, and the failure the cancelled ones name
        stop(because: StopState.failFastReason(op))
      }
    case .dependents:
      // Dependents one after the other in this loop while releasing one sets off nothing more
      // (most do not); when it does, what it set off is carried out before the next.
      let dependents = op.dependents
      var index = cascade.frames[top].index
      while index < dependents.count {
        let dependent = dependents[index]
        index += 1
        // The last one is a tail call: its frame goes first, so a chain keeps one frame.
        if index == dependents.count { cascade.frames.removeLast() } else { cascade.frames[top].index = index }
        if graph.releaseDependent(dependent, of: op) { evaluate(dependent) }
        if index == dependents.count || cascade.frames.count != top + 1 { return }
      }
      cascade.frames.removeLast()
    }
  }
}
