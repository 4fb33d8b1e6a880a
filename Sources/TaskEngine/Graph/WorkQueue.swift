// WorkQueue: a named lane with a concurrency limit, suspension and a priority-ordered ready set.
import HeapModule

/// Like OperationQueue: limits how many of its operations execute at once; dependencies may
/// cross queues freely.
public final class WorkQueue {
  public let name: String
  /// -1 = unlimited. Changing it takes effect at the next scheduling step.
  @exclusivity(unchecked) public var maxConcurrent: Int
  @exclusivity(unchecked) public internal(set) var isSuspended: Bool
  @exclusivity(unchecked) public internal(set) var running = 0
  /// Every operation ever put on this queue, in declaration order.
  @exclusivity(unchecked) public internal(set) var operations: [OperationNode] = []
  @exclusivity(unchecked) var ready = ReadySet()
  /// Operations whose body waited with its slot given back, to be resumed when one is free
  /// (before anything new starts).
  @exclusivity(unchecked) var reclaimers: [(op: OperationNode, resume: () -> Void)] = []
  /// Where its operations' `sh` commands run (nil: this machine).
  @exclusivity(unchecked) public var executor: (any CommandExecutor)?
  /// The last operation that gave back a slot, and up to which ready-sequence number the
  /// operations waiting here found it full (they start when a slot comes back).
  @exclusivity(unchecked) var freedBy: OperationNode?
  @exclusivity(unchecked) var blockedSequence = 0
  /// Tells the scheduler one of its operations' progress changed.
  var progressChanged: ((OperationNode) -> Void)?
  /// Tells the scheduler one of its operations' progress was cancelled, paused or resumed.
  var progressControl: ((OperationNode, ProgressNode.Control) -> Void)?
  public let id: Int

  init(id: Int, name: String, maxConcurrent: Int, suspended: Bool) {
    self.id = id
    self.name = name
    self.maxConcurrent = maxConcurrent
    self.isSuspended = suspended
  }

  /// Operations on this queue that have not finished.
  public var count: Int { operations.reduce(0) { $0 + ($1.isFinished ? 0 : 1) } }

  var hasCapacity: Bool { !isSuspended && (maxConcurrent < 0 || running < maxConcurrent) }
}

/// Orders the ready set: higher priority first, then declaration order.
struct ReadyEntry: Comparable {
  let priority: Int
  /// The longest path from it to the end of the run in typical seconds (0 without history).
  let rank: Double
  public let id: Int
  /// Unowned: the scheduler's list of operations keeps it alive, and heap moves then cost
  /// no reference counting.
  unowned(unsafe) let operation: OperationNode

  init(priority: Int, rank: Double = 0, id: Int, operation: OperationNode) {
    (self.priority, self.rank, self.id, self.operation) = (priority, rank, id, operation)
  }

  static func < (a: ReadyEntry, b: ReadyEntry) -> Bool {
    // Heap pops max first: higher priority, then the longer path, then the lower (earlier) id.
    a.priority != b.priority ? a.priority < b.priority : a.rank != b.rank ? a.rank < b.rank : a.id > b.id
  }
  static func == (a: ReadyEntry, b: ReadyEntry) -> Bool { a.id == b.id }
}

/// A queue's ready operations: the highest priority pops first, then the earliest declared.
/// Operations mostly become ready in the order they pop in (one priority, declaration order):
/// those wait in a line, and only one that would pop before the line's last goes into a heap.
struct ReadySet {
  /// In pop order from `head` on: each pops before the next.
  private var line: [ReadyEntry] = []
  private var head = 0
  private var heap = Heap<ReadyEntry>()

  var isEmpty: Bool { head == line.count && heap.isEmpty }
  var count: Int { line.count - head + heap.count }

  mutating func insert(_ entry: ReadyEntry) {
    if head == line.count || entry < line[line.count - 1] {
      line.append(entry)
    } else {
      heap.insert(entry)
    }
  }

  mutating func popMax() -> ReadyEntry? {
    if head < line.count, heap.isEmpty || heap.max! < line[head] {
      let entry = line[head]
      head += 1
      if head == line.count {
        line.removeAll(keepingCapacity: true)
        head = 0
      } else if head >= 1024 && head * 2 >= line.count {
        line.removeFirst(head)
        head = 0
      }
      return entry
    }
    return heap.popMax()
  }
}
