// OperationProgress: what an operation's progress events say: its composed progress, in the
// units and words of the progress that stands for it.
extension ProgressSnapshot {
  /// How many wrapping nodes `ofOperation` looks through at most.
  static let maxWrapping = 16

  /// An operation's progress (`node`, `op.progress`) as one consistent set of values.
  ///
  /// The fraction is always the operation's own: it composes every node below it, so it only
  /// moves as the work does (a child's fraction starts again at 0 with each new child). The
  /// units and words are those of the node that stands for the whole operation: from `node`
  /// down, a node that only wraps one child (no words of its own, none of its own units done,
  /// all its units pending in that child) is passed by for that child, whose fraction is the
  /// same. So the body's `progress { total = 4 }` shows as "2 of 4", and a step it runs inside
  /// it is part of the fraction, not the row.
  ///
  /// Once the operation's progress is complete (the body's node finished and was folded into
  /// it, or the operation succeeded), the values are those of the node last shown
  /// (`lastShown`), complete: its total done, its own words kept, the default words redone.
  /// Returns the node to remember as shown.
  public static func ofOperation(_ node: ProgressNode, lastShown: ProgressNode?) -> (ProgressSnapshot, ProgressNode) {
    var shown = node
    var depth = 0  // bounded: 100,000 nested groups each walked the whole chain (quadratic)
    while depth < maxWrapping, let child = shown.onlyWrappedChild {
      shown = child
      depth += 1
    }
    let paused = shown.isPaused || node.isPaused
    if node.isFinished {
      let source = shown !== node ? shown : lastShown ?? node
      let image = source.completedImage()
      return (
        ProgressSnapshot(
          completed: image.completed, total: image.total, fraction: 1, indeterminate: false,
          description: image.localizedDescription,
          additionalDescription: image.localizedAdditionalDescription, paused: paused,
          userInfo: source.userInfo.isEmpty ? node.userInfo : source.userInfo), source
      )
    }
    var snapshot = ProgressSnapshot(
      completed: shown.completed, total: shown.total, fraction: min(1, node.fraction),
      indeterminate: shown.isIndeterminate, description: shown.localizedDescription,
      additionalDescription: shown.localizedAdditionalDescription, paused: paused)
    snapshot.wordsSayPaused = shown.wordsSayPaused
    snapshot.userInfo = shown.userInfo.isEmpty ? node.userInfo : shown.userInfo
    return (snapshot, shown)
  }
}

extension ProgressNode {
  /// The child this node only wraps: its one child, holding all of its units, while the node
  /// has no words and no units done of its own (its fraction is then the child's); else nil.
  var onlyWrappedChild: ProgressNode? {
    guard description == nil, additionalDescription == nil, childCount == 1, completed == 0, total > 0,
      let child = children.first, child.pendingInParent == total
    else { return nil }
    return child
  }

  /// A detached copy of this node's values with all its work done (a node without a total
  /// counts 1 of 1; file counts all done); no clock, so no rate.
  func completedImage() -> ProgressNode {
    let image = ProgressNode(total: total > 0 ? total : 1, kind: kind)
    image.completed = image.total
    image.description = description
    image.additionalDescription = additionalDescription
    image.fileOperation = fileOperation
    image.fileURL = fileURL
    image.fileTotalCount = fileTotalCount
    image.fileCompletedCount = fileTotalCount ?? fileCompletedCount
    return image
  }
}
