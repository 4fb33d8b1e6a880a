// Groups: an operation whose children run inside it (GroupOperation in Advanced NSOperations).
import FoundationEssentials

/// A group's body: when the group starts (after its dependencies and conditions), its
/// children are scheduled; it finishes when all of them have, failed if any failed.
/// Cancelling the group cancels its children. A group takes no slot of its queue.
public final class GroupBody: OperationBody {
  public init() {}

  public var summary: String { "group" }

  public func start(_ group: OperationNode, scheduler: Scheduler) {
    // Its progress composes the children by weight.
    let children = group.children
    group.progress.total = Int64(saturating: children.reduce(0) { $0 + max(0, $1.weight) } * 100)
    for child in children { watch(child, in: group, scheduler: scheduler) }
    scheduler.scheduleChildren(of: group)
    settle(group, scheduler: scheduler)
  }

  /// Cancels every descendant: nested running groups are walked with a list, not by calling
  /// their own `interrupt` (100,000 nested groups would be as many stack frames), and then
  /// settled innermost first once their children have finished.
  public func interrupt(_ group: OperationNode, scheduler: Scheduler, reason: String) {
    var groups = [group], next = 0
    while next < groups.count {
      let g = groups[next]
      next += 1
      for child in g.children where !child.isFinished && !child.isCancelled {
        if child.state == .executing, child.body is GroupBody {
          scheduler.markCancelled(child, reason: reason)
          groups.append(child)
        } else {
          scheduler.completely { scheduler.cancel(child, reason: reason) }
        }
      }
    }
    for g in groups.reversed() { settle(g, scheduler: scheduler) }
  }

  /// Follows a child (also one added while the group runs) until it finishes.
  func watch(_ child: OperationNode, in group: OperationNode, scheduler: Scheduler) {
    group.progress.addChild(child.progress, pending: Int64(saturating: max(0, child.weight) * 100))
    guard !child.isFinished else { return }
    group.unfinishedChildren += 1
    scheduler.onFinish(child) { [unowned group] _ in
      group.unfinishedChildren -= 1
      self.settle(group, scheduler: scheduler)
    }
  }

  func settle(_ group: OperationNode, scheduler: Scheduler) {
    guard group.state == .executing, group.unfinishedChildren == 0 else { return }
    if let bad = group.children.first(where: { $0.outcome == .failed }) {
      // The child, then the operation inside it that failed: nested groups repeating each
      // other's whole errors grew quadratically (10,000 levels: gigabytes of text).
      let leaf = bad.isGroup ? bad.failedLeaf ?? bad : bad
      group.failedLeaf = leaf
      let cause =
        leaf === bad
        ? bad.error
        : "'\(leaf.name)' \(leaf.outcome?.rawValue ?? "failed")" + (leaf.error.map { ": \($0)" } ?? "")
      scheduler.finish(
        group, .failed, error: "'\(bad.name)' failed" + (cause.map { ": \($0)" } ?? ""),
        kind: .child)
    } else if group.isCancelled {
      scheduler.finish(group, .cancelled)
    } else if let cancelled = group.children.first(where: { $0.outcome == .cancelled }) {
      // Why, as for a failure: the child, then the operation inside it (a deadlock, say).
      let leaf = cancelled.isGroup ? cancelled.failedLeaf ?? cancelled : cancelled
      group.failedLeaf = leaf
      let cause =
        leaf === cancelled
        ? cancelled.error
        : "'\(leaf.name)' \(leaf.outcome?.rawValue ?? "cancelled")" + (leaf.error.map { ": \($0)" } ?? "")
      scheduler.finish(group, .cancelled, error: "'\(cancelled.name)' cancelled" + (cause.map { ": \($0)" } ?? ""))
    } else {
      scheduler.finish(group, .succeeded)
    }
  }
}

extension Scheduler {
  /// A new group (an operation with a GroupBody).
  public func makeGroup(name: String? = nil, queue: WorkQueue? = nil) throws -> OperationNode {
    let group = try makeOperation(name: name, queue: queue, body: GroupBody())
    group.isGroup = true
    return group
  }

  /// Puts `child` in `group`: it runs when the group runs (at once if the group is running).
  public func add(_ child: OperationNode, to group: OperationNode) throws {
    guard group.isGroup else { throw EngineError(.invalid, "'\(group.name)' is not a group") }
    guard child !== group else { throw EngineError(.invalid, "a group cannot contain itself") }
    if let other = child.group {
      if other === group { return }
      throw EngineError(.invalid, "'\(child.name)' is already in group '\(other.name)'")
    }
    var ancestor: OperationNode? = group
    while let a = ancestor {
      if a === child { throw EngineError(.cycle, "group cycle: '\(child.name)' contains '\(group.name)'") }
      ancestor = a.group
    }
    guard child.canJoinGroup else {
      throw EngineError(
        .alreadyStarted, "cannot put '\(child.name)' in group '\(group.name)': it is already part of the run")
    }
    guard !group.isFinished else {
      throw EngineError(.alreadyStarted, "cannot add to group '\(group.name)': it already finished")
    }
    child.group = group
    group.children.append(child)
    if group.state == .executing, let body = group.body as? GroupBody {
      body.watch(child, in: group, scheduler: self)
      schedule([child], asChild: true)
    }
  }

  /// Called by a group's body when it starts.
  func scheduleChildren(of group: OperationNode) {
    let now = clock.now
    for child in group.children where child.origin == nil {
      child.origin = (StartCause(after: group, kind: .group, detail: nil), now)
    }
    schedule(group.children, asChild: true)
  }

  /// The outermost group that has not started yet, if `op` sits in one: scheduling `op`
  /// means scheduling that group.
  func entryPoint(for op: OperationNode) -> OperationNode {
    var entries = EntryPoints()
    return entries.entry(for: op)
  }
}

/// `entryPoint(for:)` over many operations: each group's answer is kept, so the operations
/// of 100,000 nested groups walk the chain of groups once, not once each (that was quadratic).
struct EntryPoints {
  private var known: [ObjectIdentifier: OperationNode] = [:]

  @inline(__always)
  mutating func entry(for op: OperationNode) -> OperationNode {
    guard let first = op.group, !first.hasStarted else { return op }  // most operations
    return walk(from: op)
  }

  private mutating func walk(from op: OperationNode) -> OperationNode {
    var walked: [OperationNode] = []
    var entry = op
    while let group = entry.group, !group.hasStarted {
      if let answer = known[ObjectIdentifier(group)] { entry = answer; break }
      walked.append(group)
      entry = group
    }
    for group in walked { known[ObjectIdentifier(group)] = entry }
    return entry
  }
}
