// PathSearch: the graph's two depth-first walks: one path between two operations, every cycle.

/// The searches the cycle and deadlock reports share. `path` finds a path of blocking: what
/// blocks a node is its unfinished dependencies and the operations its body waits for
/// (`waits`, empty for plain edges); a new edge's cycle check and a new wait's deadlock check
/// both ask it. `cycles` walks the whole graph once and hands over each cycle it meets; the
/// cycle report of names resolved late and the deadlock report of a stalled run both use it.
enum PathSearch {
  /// A node of `cycles`' walk: on the current path, or done with.
  private enum Mark { case visiting, done }

  /// A path from `start` to `target` (both included), each node blocked by the next, or nil.
  /// Iterative, so a deep graph cannot overflow the stack; each node is visited once.
  static func path(
    from start: OperationNode, to target: OperationNode,
    waits: [OperationNode: Set<OperationNode>] = [:]
  ) -> [OperationNode]? {
    var parent: [OperationNode: OperationNode] = [:]
    var seen: Set<OperationNode> = [start]
    var stack = [start]
    while let node = stack.popLast() {
      if node === target {
        var path = [node]
        var cursor = node
        while let p = parent[cursor] { path.append(p); cursor = p }
        return path.reversed()
      }
      for next in node.dependencies where !next.isFinished && seen.insert(next).inserted {
        parent[next] = node
        stack.append(next)
      }
      guard !waits.isEmpty, let targets = waits[node] else { continue }
      for next in targets where seen.insert(next).inserted {
        parent[next] = node
        stack.append(next)
      }
    }
    return nil
  }

  /// Walks what each node leads to (`next`: targets, each with a label for the hop; a lazy
  /// view of a node's own list allocates nothing) from every root, depth first and once per
  /// node, so it is O(V + E) and cannot overflow the stack. At each hop back onto the current
  /// path (a cycle) it calls `found` with the hops of that cycle, from the node it closes on
  /// around to the hop back; it stops when `found` returns true.
  static func cycles<Roots: Sequence<OperationNode>, Hops: RandomAccessCollection, Label>(
    from roots: Roots, next: (OperationNode) -> Hops, found: ([(from: OperationNode, label: Label)]) -> Bool
  ) where Hops.Element == (op: OperationNode, label: Label), Hops.Index == Int {
    var marks: [ObjectIdentifier: Mark] = [:]
    for root in roots where marks[ObjectIdentifier(root)] == nil {
      // The current path: each node, where it leads, and how far through that it is.
      var path: [(op: OperationNode, next: Hops, index: Int)] = []
      func enter(_ node: OperationNode) {
        let hops = next(node)
        path.append((node, hops, hops.startIndex))
        marks[ObjectIdentifier(node)] = .visiting
      }
      enter(root)
      while let (node, targets, index) = path.last {
        guard index < targets.endIndex else {
          marks[ObjectIdentifier(node)] = .done
          path.removeLast()
          continue
        }
        path[path.count - 1].index += 1
        let target = targets[index].op
        switch marks[ObjectIdentifier(target)] {
        case .visiting:
          let start = path.firstIndex { $0.op === target }!
          if found(path[start...].map { (from: $0.op, label: $0.next[$0.index - 1].label) }) { return }
        case .done: continue
        case nil:
          enter(target)
        }
      }
    }
  }
}
