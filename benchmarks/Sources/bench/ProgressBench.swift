// ProgressBench: the cost of a `completed` update on the engine's progress nodes.
import Foundation
import TaskEngine

enum ProgressBench {
  /// Nanoseconds per update of a leaf's `completed`, `count` times.
  static func leaf(count: Int, observed: Bool) -> Double {
    let node = ProgressNode(total: Int64(count))
    var changes = 0
    if observed { node.onChange = { _ in changes += 1 } }
    let seconds = Measure.best {
      node.completed = 0
      for i in 1...count { node.completed = Int64(i) }
    }
    if observed && changes == 0 { print("  ! the observer never heard a change") }
    return seconds / Double(count) * 1e9
  }

  /// Nanoseconds per update of a leaf 5 levels below the root (the root's fraction follows).
  static func deep(count: Int) -> Double {
    let root = ProgressNode(total: 1)
    var parent = root
    for _ in 1...4 {
      let child = ProgressNode(total: 1)
      _ = parent.addChild(child, pending: 1)
      parent = child
    }
    let leaf = ProgressNode(total: Int64(count) + 1)
    _ = parent.addChild(leaf, pending: 1)
    let seconds = Measure.best {
      leaf.completed = 0
      for i in 1...count { leaf.completed = Int64(i) }
    }
    if !(root.fraction > 0) { print("  ! the root did not follow its leaf") }
    return seconds / Double(count) * 1e9
  }
}
