// Graphs: the same dependency graphs for taskrun, OperationQueue, make and ninja.
import Foundation

enum Shape: String, CaseIterable {
  case independent, chain, layered

  /// The dependencies of each of `n` nodes (indices into 0..<n), as graphs.lua builds them.
  func dependencies(_ n: Int) -> [[Int]] {
    switch self {
    case .independent:
      return Array(repeating: [], count: n)
    case .chain:
      return (0..<n).map { $0 == 0 ? [] : [$0 - 1] }
    case .layered:
      let width = max(1, n / 100)
      return (0..<(width * 100)).map { index in
        let layer = index / width, i = index % width
        return layer == 0 ? [] : [(layer - 1) * width + i, (layer - 1) * width + (i + 1) % width]
      }
    }
  }
}

/// A graph of no-op BlockOperations on one OperationQueue limited to `jobs`.
func runOperationQueue(_ shape: Shape, _ n: Int, jobs: Int) {
  let deps = shape.dependencies(n)
  let ops = deps.indices.map { _ in BlockOperation {} }
  for (i, list) in deps.enumerated() { for d in list { ops[i].addDependency(ops[d]) } }
  let queue = OperationQueue()
  queue.maxConcurrentOperationCount = jobs
  queue.addOperations(ops, waitUntilFinished: true)
}

/// Writes a Makefile and a build.ninja whose targets run `true` in the given shape.
func writeBuildFiles(_ shape: Shape, _ n: Int, in directory: String) throws {
  let deps = shape.dependencies(n)
  var make = ".PHONY: all"
  var all = "all:"
  var rules = ""
  var ninja = "rule t\n  command = true\n"
  for (i, list) in deps.enumerated() {
    make += " t\(i)"
    all += " t\(i)"
    rules += "t\(i):" + list.map { " t\($0)" }.joined() + "\n\ttrue\n"
    ninja += "build t\(i): t" + (list.isEmpty ? "" : " |" + list.map { " t\($0)" }.joined()) + "\n"
  }
  try (make + "\n" + all + "\n" + rules).write(toFile: directory + "/Makefile", atomically: true, encoding: .utf8)
  try ninja.write(toFile: directory + "/build.ninja", atomically: true, encoding: .utf8)
}
