// PathSearch: the one depth-first search for "does this wait, through others, for that?".

/// Finds a path of blocking through the graph: what blocks a node is its unfinished
/// dependencies and the operations its body waits for (`waits`, empty for plain edges).
/// The cycle report of a new edge and the deadlock report of a new wait both ask it.
enum PathSearch {
  /// A path from `start` to `target` (both included), each node blocked by the next, or nil.
  /// Iterative, so a deep graph cannot overflow the stack; each node is visited once.
  static func path(from start: OperationNode, to target: OperationNode,
                   waits: [OperationNode: Set<OperationNode>] = [:]) -> [OperationNode]? {
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
}
