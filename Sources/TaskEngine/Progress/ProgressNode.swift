// ProgressNode: a progress tree with Foundation `Progress` (NSProgress) semantics, and
// ProgressContext, the per-coroutine stack that implicit composition uses.
//
// Arithmetic (as in swift-corelibs-foundation's Progress.swift):
// - fraction = (completed + Σ child.fraction × child.pending) / total while total > 0;
//   an indeterminate node has fraction 0; with total <= 0 only the node's own counts count.
// - an indeterminate child contributes 0 (it does not make the parent indeterminate);
// - a child that finishes leaves `children` and its pending units move into the parent's
//   `completed`; it is settled for good (later changes to it no longer reach the parent).
//
// Cost: a change of `completed` or `total` is O(depth) at most (it stops where an ancestor's
// numbers no longer change): each ancestor keeps the sum of its
// children's contributions in its own units (`childUnits`) and is told only the difference.
// Nothing is allocated per update; `onChange` is a plain closure call per node on the path.
//
// References, chosen for that hot path. Measured in release builds on this machine: with a
// `weak` parent (every retain and release of a weakly referenced object takes the runtime's
// slow side-table path) and retaining walks, ~150 ns per update at depth 1; as below, ~25 ns
// at depth 1 and ~70 ns at depth 3 without observers (+~30 ns with an `onChange` on the root).
// - a parent holds its unfinished children strongly (`slots`);
// - a child reaches its parent through `link`, unowned(unsafe), under the invariant
//   "`link` is nil or alive": a parent's deinit clears the links of its remaining children
//   (so `parent` reads nil, as a weak reference would), and a child that finishes holds its
//   parent strongly from then on (`settledParent`; the parent no longer holds it, so there is
//   no cycle), which keeps `parent` meaningful after the child is settled;
// - the upward walk of an update retains nothing until the first `onChange` handler runs
//   (nothing else that could free a node runs before; a `clock` closure must only read time);
//   from there on each node is held while its handler runs, as handlers may do anything;
// - the hot stored properties opt out of dynamic exclusivity checks; this class is
//   single-threaded and never hands out `inout` access to them.
import FoundationEssentials
import Glibc

/// A node of a progress tree, like Foundation's Progress; single-threaded (owned by the
/// scheduler's thread), not Sendable.
public final class ProgressNode {
  /// What the units mean; `file` means bytes and enables the byte-count descriptions.
  public enum Kind: String, Sendable { case file }
  /// What is being done to the file(s) of a `file` progress (for the default description).
  public enum FileOperation: String, Sendable { case downloading, decompressing, receiving, copying }

  // MARK: Counts

  @exclusivity(unchecked) private var _total: Int64
  @exclusivity(unchecked) private var _completed: Int64 = 0

  /// Σ child.fraction × child.pending over the live children, in this node's units.
  /// Independent of `total`, so changing `total` rescales the children's share by itself.
  @exclusivity(unchecked) private var childUnits: Double = 0
  /// What this node last added to its parent's `childUnits`.
  @exclusivity(unchecked) private var contribution: Double = 0
  /// True from `addChild` until this node finishes (then its parent has settled it).
  @exclusivity(unchecked) private var isLinked = false
  @exclusivity(unchecked) private var pending: Int64 = 0

  /// Live children in insertion order; removed ones leave a hole (nil) until compaction,
  /// so removing a finished child is O(1) amortized.
  @exclusivity(unchecked) private var slots: [ProgressNode?] = []
  @exclusivity(unchecked) private var holes = 0
  /// Set by the first `addChild` (settled children leave `slots` but may still link here).
  @exclusivity(unchecked) private var hadChildren = false
  @exclusivity(unchecked) private var slotIndex = -1
  /// The parent; see the reference rules at the top of the file.
  @exclusivity(unchecked) private unowned(unsafe) var link: ProgressNode?
  /// The parent, held strongly once this node has finished and left its `slots`.
  private var settledParent: ProgressNode?

  deinit {
    for case let child? in slots {
      child.link = nil
      child.isLinked = false
    }
  }

  /// A node that is attached to nothing.
  public init(total: Int64 = -1, kind: Kind? = nil) {
    _total = total
    self.kind = kind
  }

  /// The amount of work, in this node's units. Changing it rescales the children's share
  /// (their pending units stay the same, the whole gets bigger or smaller).
  public var total: Int64 {
    get { _total }
    set {
      guard newValue != _total else { return }
      _total = newValue
      bubble(countsChanged: true)
    }
  }

  /// The work done, in this node's units (children's work arrives here when they finish).
  public var completed: Int64 {
    get { _completed }
    set {
      guard newValue != _completed else { return }
      _completed = newValue
      bubble(countsChanged: true)
    }
  }

  /// Foundation's `fractionCompleted`: never NaN, never negative; 0 when indeterminate; with
  /// `total <= 0` the node's own fraction only ((1, 0) is finished: 1.0). May exceed 1 when
  /// `completed > total`, as in Foundation.
  public var fraction: Double {
    if _total > 0 {
      guard _completed >= 0 else { return 0 }
      return max(0, (Double(_completed) + childUnits) / Double(_total))
    }
    return _completed > 0 && _total == 0 ? 1 : 0
  }

  /// `total < 0 || completed < 0 || (total == 0 && completed == 0)`, as Foundation's code
  /// (not its doc comment) has it.
  public var isIndeterminate: Bool {
    _total < 0 || _completed < 0 || (_total == 0 && _completed == 0)
  }

  /// `(completed >= total && completed > 0 && total > 0) || (completed > 0 && total == 0)`.
  public var isFinished: Bool {
    (_completed >= _total && _completed > 0 && _total > 0) || (_completed > 0 && _total == 0)
  }

  // MARK: State

  /// Set by `cancel()` (here or on an ancestor); permanent.
  public private(set) var isCancelled = false
  /// Set by `pause()`, cleared by `resume()` (here or on an ancestor).
  public private(set) var isPaused = false
  /// A hint for user interfaces only (as in Foundation); `cancel()` works regardless.
  public var isCancellable: Bool = true {
    didSet { if oldValue != isCancellable { bubble(countsChanged: false) } }
  }
  /// A hint for user interfaces only (as in Foundation); `pause()` works regardless.
  public var isPausable: Bool = false {
    didSet { if oldValue != isPausable { bubble(countsChanged: false) } }
  }
  public var kind: Kind? {
    didSet { if oldValue != kind { bubble(countsChanged: false) } }
  }

  // MARK: Tree

  /// The node this one was added to; nil when it was never added or the parent is gone (like
  /// a weak reference). It stays set after this node finishes: a node is added to at most one
  /// parent in its life, as in Foundation.
  public var parent: ProgressNode? { link }

  /// The unfinished children, in the order they were added.
  public var children: [ProgressNode] { slots.compactMap { $0 } }

  /// The number of unfinished children (no allocation, unlike `children.count`).
  public var childCount: Int { slots.count - holes }

  /// This node's pending units in its parent (0 if it has none).
  public var pendingInParent: Int64 { link == nil ? 0 : pending }

  /// Makes `child` a child worth `pending` of this node's units (Foundation's
  /// `addChild(_:withPendingUnitCount:)`). Returns false and changes nothing when `child`
  /// already has a parent, is this node, or is one of its ancestors. A child that is already
  /// partly done counts at once; one that is already finished moves `pending` into
  /// `completed` at once. A child added to a cancelled or paused node is cancelled or paused.
  @discardableResult
  public func addChild(_ child: ProgressNode, pending: Int64) -> Bool {
    guard child.link == nil, child !== self else { return false }
    // Only a node that ever had children can be an ancestor: most are added before they get
    // any (a group's node when its parent group starts), so most adds walk nothing.
    var ancestor: ProgressNode? = child.hadChildren ? link : nil
    while let node = ancestor {
      if node === child { return false }
      ancestor = node.link
    }
    hadChildren = true
    child.link = self
    child.pending = pending
    child.isLinked = true
    child.contribution = 0
    child.slotIndex = slots.count
    slots.append(child)
    if child.push(into: self) {
      if hasClock { sample() }
      bubble(countsChanged: true, sampled: true)
    } else {
      bubble(countsChanged: true, sampled: true)  // told here; above, no count changed
    }
    if isCancelled { child.cancel() }
    if isPaused { child.pause() }
    return true
  }

  // MARK: Cancel, pause, resume

  /// Called once when this node becomes cancelled. Setting it on a node that is already
  /// cancelled calls it at once (Foundation does the same, asynchronously).
  public var onCancel: (() -> Void)? {
    didSet { if isCancelled, let onCancel { onCancel() } }
  }
  /// Called each time this node goes from running to paused. Setting it on a node that is
  /// already paused calls it at once (as Foundation does).
  public var onPause: (() -> Void)? {
    didSet { if isPaused, let onPause { onPause() } }
  }
  /// Called each time this node goes from paused to running.
  public var onResume: (() -> Void)?

  /// What a node does when it is cancelled, paused or resumed, besides its handlers.
  public enum Control { case cancel, pause, resume }
  /// The work this node stands for (an operation's progress: the scheduler), told after the
  /// script's handler: a cancel while `isCancellable`, a pause while `isPausable`, and every
  /// resume. Not the script's to set: its handlers are `onCancel`, `onPause`, `onResume`.
  public var control: ((Control) -> Void)?

  /// Cancels this node and every unfinished descendant. Each node that was not cancelled yet
  /// fires `onCancel` (synchronously, parent before children), then `control`, and its own
  /// `onChange`; cancelling twice fires nothing the second time. A cancelled node's
  /// descendants are all cancelled (a child added later is cancelled as it is added), so the
  /// walk passes a cancelled subtree by: cancelling each of 100,000 nested groups from the
  /// inside out stays linear. The walk keeps its own stack: a deep tree needs no deep calls.
  public func cancel() {
    walk { node in
      guard !node.isCancelled else { return false }
      node.isCancelled = true
      node.onCancel?()
      if node.isCancellable { node.control?(.cancel) }
      node.changedItself()
      return true
    }
  }

  /// Pauses this node and every unfinished descendant; `onPause` fires on each node that was
  /// not paused. The change is bubbled from this node (so the operation it belongs to shows
  /// it) and told to each descendant itself.
  public func pause() {
    walk { node in
      if !node.isPaused {
        node.isPaused = true
        node.onPause?()
        if node.isPausable { node.control?(.pause) }
        if node === self { node.bubble(countsChanged: false) } else { node.changedItself() }
      }
      return true
    }
  }

  /// Resumes this node and every unfinished descendant; `onResume` fires only on nodes that
  /// were paused; told as `pause` tells it.
  public func resume() {
    walk { node in
      if node.isPaused {
        node.isPaused = false
        node.resetEstimate()  // the rate restarts from now: the pause is not averaged in
        node.onResume?()
        node.control?(.resume)
        if node === self { node.bubble(countsChanged: false) } else { node.changedItself() }
      }
      return true
    }
  }

  /// Tells this node's own `onChange` (not its ancestors'): a cancel is a change of each node
  /// it reaches, not of the nodes above (their numbers and flags stay as they were). Bubbling
  /// each one up cost O(depth): Ctrl-C through 100,000 nested groups, each group's progress
  /// cancelled in turn, was quadratic.
  private func changedItself() {
    if hasOnChange { onChange?(self) }
  }

  /// Visits this node and its unfinished descendants, parents before children, in the order
  /// they were added; `visit` says whether to go on into a node's children. Nodes are held
  /// while visited: handlers may change the tree.
  private func walk(_ visit: (ProgressNode) -> Bool) {
    var stack: [ProgressNode] = [self]
    while let node = stack.popLast() {
      guard visit(node) else { continue }
      for case let child? in node.slots.reversed() { stack.append(child) }
    }
  }

  /// Called after any change of this node or (bubbling) of a descendant, with the node that
  /// changed first (a cancel is told to each node it reaches, not bubbled; a pause or resume
  /// is bubbled from the node it was asked of); the host coalesces these. It is called once on every node of the path,
  /// bottom up, after all of their counts are up to date; for a change of counts, only as far
  /// up as the counts changed. Setting a property to the value it already has is no change.
  public var onChange: ((ProgressNode) -> Void)? {
    didSet { hasOnChange = onChange != nil }
  }
  @exclusivity(unchecked) private var hasOnChange = false

  // MARK: Descriptions (defaults in ProgressDescription.swift)

  /// Overrides `localizedDescription`; nil means the default.
  public var description: String? {
    didSet { if oldValue != description { bubble(countsChanged: false) } }
  }
  /// Overrides `localizedAdditionalDescription`; nil means the default.
  public var additionalDescription: String? {
    didSet { if oldValue != additionalDescription { bubble(countsChanged: false) } }
  }

  // MARK: User info

  /// A value of `userInfo`.
  public enum InfoValue: Sendable, Equatable, CustomStringConvertible {
    case text(String), number(Double), flag(Bool)
    public var description: String {
      switch self {
      case .text(let text): text
      case .number(let number): "\(number)"
      case .flag(let flag): "\(flag)"
      }
    }
  }
  /// Foundation's free-form `userInfo` (its well-known keys are the fields below); copied
  /// into the operation's progress events.
  public var userInfo: [String: InfoValue] = [:] {
    didSet { if oldValue != userInfo { bubble(countsChanged: false) } }
  }

  // MARK: File kind

  /// Bytes per second: the value set, or else an estimate from the clock (nil without a
  /// clock or before the first sample interval).
  public var throughput: Double? {
    get { throughputOverride ?? estimatedThroughput }
    set {
      guard newValue != throughputOverride else { return }
      throughputOverride = newValue
      bubble(countsChanged: false)
    }
  }
  /// Seconds left: the value set, or else remaining units / `throughput` (0 when finished;
  /// nil when indeterminate, without a total, or without a positive throughput).
  public var estimatedTimeRemaining: Double? {
    get { etaOverride ?? estimatedETA }
    set {
      guard newValue != etaOverride else { return }
      etaOverride = newValue
      bubble(countsChanged: false)
    }
  }
  public var fileOperation: FileOperation? {
    didSet { if oldValue != fileOperation { bubble(countsChanged: false) } }
  }
  public var fileURL: String? {
    didSet { if oldValue != fileURL { bubble(countsChanged: false) } }
  }
  public var fileTotalCount: Int? {
    didSet { if oldValue != fileTotalCount { bubble(countsChanged: false) } }
  }
  public var fileCompletedCount: Int? {
    didSet { if oldValue != fileCompletedCount { bubble(countsChanged: false) } }
  }

  // MARK: Estimation

  /// Monotonic seconds, used only to estimate `throughput` and `estimatedTimeRemaining`.
  /// Setting it starts a new estimate. Not inherited: the host sets it on the nodes it shows.
  /// It is called while an update walks the tree, so it must only read time.
  public var clock: (() -> Double)? {
    didSet {
      hasClock = clock != nil
      resetEstimate()
    }
  }
  /// `clock != nil`, without copying the closure on every update.
  @exclusivity(unchecked) private var hasClock = false

  private var throughputOverride: Double?
  private var etaOverride: Double?

  // Smoothing: a rate sample is taken when at least `minimumSampleInterval` seconds passed
  // since the previous one (updates in between only move the current value), and blended
  // into an exponential moving average whose weight depends on the elapsed time,
  // alpha = 1 - exp(-dt / smoothingTimeConstant), so the estimate does not depend on how
  // often the host updates and a burst moves the ETA only by a fraction. When progress
  // stalls, reading the estimate blends in the stall (rate 0 since the last sample) without
  // storing it, so the throughput decays and the ETA grows instead of freezing. Progress
  // that goes backwards (a restart) starts a new estimate.
  static let minimumSampleInterval = 0.5
  static let smoothingTimeConstant = 3.0

  private var anchorTime = 0.0
  private var anchorUnits = 0.0
  private var hasAnchor = false
  private var smoothedRate: Double?

  /// Completed units including the unfinished children's share (what `fraction` counts).
  var effectiveCompleted: Double {
    _total > 0 ? Double(_completed) + childUnits : Double(_completed)
  }

  private func resetEstimate() {
    smoothedRate = nil
    hasAnchor = false
    guard let clock, _completed >= 0 else { return }
    anchorTime = clock()
    anchorUnits = effectiveCompleted
    hasAnchor = true
  }

  /// Takes a rate sample if the last one is old enough (see the smoothing comment above).
  private func sample() {
    guard let clock else { return }
    guard _completed >= 0 else {
      smoothedRate = nil
      hasAnchor = false
      return
    }
    let now = clock()
    let units = effectiveCompleted
    guard hasAnchor, units >= anchorUnits, now >= anchorTime else {
      anchorTime = now
      anchorUnits = units
      hasAnchor = true
      smoothedRate = nil
      return
    }
    let dt = now - anchorTime
    guard dt >= Self.minimumSampleInterval else { return }
    let rate = (units - anchorUnits) / dt
    if let old = smoothedRate {
      smoothedRate = old + Self.weight(dt) * (rate - old)
    } else {
      smoothedRate = rate
    }
    anchorTime = now
    anchorUnits = units
  }

  private static func weight(_ dt: Double) -> Double { 1 - exp(-dt / smoothingTimeConstant) }

  /// The smoothed rate in units per second, with a stall since the last sample blended in.
  var estimatedThroughput: Double? {
    guard let clock, hasAnchor, _completed >= 0, !isPaused else { return nil }
    let dt = clock() - anchorTime
    guard dt >= Self.minimumSampleInterval else { return smoothedRate }
    let rate = max(0, effectiveCompleted - anchorUnits) / dt
    guard let old = smoothedRate else { return rate }
    return old + Self.weight(dt) * (rate - old)
  }

  private var estimatedETA: Double? {
    if isFinished { return 0 }
    guard _total > 0, !isIndeterminate, let rate = throughput, rate > 0, rate.isFinite else {
      return nil
    }
    return max(0, Double(_total) - effectiveCompleted) / rate
  }

  // MARK: Propagation

  /// Brings this node's share in `parent` up to date. Returns whether the parent's numbers
  /// changed (so its own share must be updated in turn).
  private func push(into parent: ProgressNode) -> Bool {
    if isFinished {
      // Settled: the pending units become the parent's own, and this node leaves the tree.
      // It holds its parent from now on; the parent lets go of it last of all (that may free
      // this node if nothing else holds it, so `self` is not touched afterwards).
      isLinked = false
      settledParent = parent
      parent.childUnits -= contribution
      contribution = 0
      parent._completed = Self.saturatingAdd(parent._completed, pending)
      parent.removeSlot(self)
      if parent.childCount <= 4 { parent.recomputeChildUnits() }
      return true
    }
    let share = isIndeterminate ? 0 : fraction * Double(pending)
    if share == contribution { return false }
    if parent.childCount == 1 {
      parent.childUnits = share  // exact: no rounding drift in the common one-child case
    } else {
      parent.childUnits += share - contribution
    }
    contribution = share
    return true
  }

  /// After a change of this node: updates the shares up the tree (only as far as they change),
  /// samples clocked nodes whose counts changed, then calls `onChange` on every node of the
  /// path, bottom up, with `self`.
  private func bubble(countsChanged: Bool, sampled: Bool = false) {
    var changed = countsChanged
    if changed && !sampled && hasClock { sample() }
    // Without retains: every node on the path is alive (self through the caller; a linked
    // node's parent by the `link` invariant; a node settled on this walk holds its parent),
    // and `isLinked` implies `link != nil`. Only `clock` closures run here, no handlers.
    unowned(unsafe) var node = self
    while node.isLinked {
      unowned(unsafe) let parent = node.link.unsafelyUnwrapped
      if changed {
        changed = node.push(into: parent)
        if changed && parent.hasClock { parent.sample() }
        // A count change is told as far as it changed numbers: above, nothing did. (Walking
        // on to the root made every update of a deep tree O(depth): 100,000 nested groups,
        // each starting and finishing, were quadratic.)
        if !changed { break }
      }
      node = parent
    }
    let top = ObjectIdentifier(node)
    // Up to the first node with a handler nothing has run since the walk above, so the path
    // is still intact (settled nodes keep their `link`).
    unowned(unsafe) var quiet = self
    while !quiet.hasOnChange {
      if ObjectIdentifier(quiet) == top { return }
      quiet = quiet.link.unsafelyUnwrapped
    }
    // Handlers may change anything, so from here on each node is held while it is called.
    var current: ProgressNode? = quiet
    while let n = current {
      if n.hasOnChange { n.onChange?(self) }
      if ObjectIdentifier(n) == top { break }
      current = n.link
    }
  }

  /// Recomputes `childUnits` from the children's shares, dropping the rounding drift of the
  /// incremental updates; done when few children are left, so it stays O(1).
  private func recomputeChildUnits() {
    var sum = 0.0
    for case let child? in slots { sum += child.contribution }
    childUnits = sum
  }

  private func removeSlot(_ child: ProgressNode) {
    let index = child.slotIndex
    guard index >= 0, index < slots.count, slots[index] === child else { return }
    slots[index] = nil
    child.slotIndex = -1
    holes += 1
    if holes * 2 > slots.count {
      var kept = 0
      for i in slots.indices {
        if let node = slots[i] {
          node.slotIndex = kept
          slots[kept] = node
          kept += 1
        }
      }
      slots.removeLast(slots.count - kept)
      holes = 0
    }
  }

  static func saturatingAdd(_ a: Int64, _ b: Int64) -> Int64 {
    let (sum, overflow) = a.addingReportingOverflow(b)
    return overflow ? (b > 0 ? .max : .min) : sum
  }
}

/// Where implicit composition looks for the current progress: one per coroutine in taskrun
/// (Foundation keeps one per thread, which breaks across coroutine switches).
public final class ProgressContext {
  private struct Frame {
    let node: ProgressNode
    let pending: Int64
    /// Made by the script's `become_current` (not the host's: an operation's progress in
    /// its body), so an operation declared meanwhile is adopted too.
    let explicit: Bool
    var childAttached = false
  }

  private var frames: [Frame] = []

  public init() {}

  /// The node of the innermost `becomeCurrent` not yet resigned.
  public var current: ProgressNode? { frames.last?.node }

  /// Makes `node` current, worth `pending` of its units for the first node made by
  /// `makeNode` until the matching `resignCurrent`. Returns false and changes nothing if
  /// `node` is already the current node (a precondition failure in Foundation).
  @discardableResult
  public func becomeCurrent(_ node: ProgressNode, pending: Int64, explicit: Bool = true) -> Bool {
    if let top = frames.last, top.node === node { return false }
    frames.append(Frame(node: node, pending: pending, explicit: explicit))
    return true
  }

  /// Pops the current node. If no node attached to it in the meantime, its pending units are
  /// added to its `completed` (the work is considered done). Returns false if nothing was
  /// current (a precondition failure in Foundation).
  @discardableResult
  public func resignCurrent() -> Bool {
    guard let frame = frames.popLast() else { return false }
    if !frame.childAttached {
      frame.node.completed = ProgressNode.saturatingAdd(frame.node.completed, frame.pending)
    }
    return true
  }

  /// A new node that attaches as implicit child of `current` (only the first one per
  /// becomeCurrent gets the pending units; later ones get no parent), like
  /// Progress(totalUnitCount:).
  public func makeNode(total: Int64, kind: ProgressNode.Kind? = nil) -> ProgressNode {
    let node = ProgressNode(total: total, kind: kind)
    if let last = frames.indices.last, !frames[last].childAttached {
      frames[last].childAttached = true
      frames[last].node.addChild(node, pending: frames[last].pending)
    }
    return node
  }

  /// A `become_current` of the script waits for the node that takes its pending units.
  public var awaitsAdoption: Bool { frames.last.map { $0.explicit && !$0.childAttached } ?? false }

  /// An operation was declared: under a `become_current` of the script whose pending units
  /// no node took yet, its progress (`node`) takes them, as `Progress(totalUnitCount:)` would
  /// (the operation's work is the work the pending units stand for). Returns whether it did.
  @discardableResult
  public func adopt(_ node: ProgressNode) -> Bool {
    guard let last = frames.indices.last, frames[last].explicit, !frames[last].childAttached,
      node.parent == nil
    else { return false }
    frames[last].childAttached = true
    return frames[last].node.addChild(node, pending: frames[last].pending)
  }
}
