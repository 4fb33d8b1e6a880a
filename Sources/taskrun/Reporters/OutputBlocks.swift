// OutputBlocks: --output group and keep-order: each finished operation's output printed as one block.
import Glibc
import TaskEngine

/// Stands in front of the line reporter (`lines`) and holds each operation's output (its
/// commands' lines and what its Lua body printed) until it finishes; then prints it as one
/// block: the reporter's finish line as its header (ok or FAILED, with the time), then the
/// lines, so the output of operations running in parallel never interleaves. An operation
/// that printed nothing has no block, only its usual line. With `keepOrder`, a block waits
/// until every operation of the run declared before it finished (`order`). On a CI service
/// (`ci`) a success's block is folded; a failure's never is. Failures and their blocks go to
/// standard error, as the reporter's do.
final class OutputBlocks: EventSink {
  private let lines: PlainReporter
  private let ci: CIFolding?
  private let limit: Int
  private let keepOrder: Bool
  /// The output of operations still running.
  private var open: [String: BlockLines] = [:]
  /// Blocks printed (GitLab's section ids count them).
  private var printed = 0

  /// A finished operation's block: its finish, told to the reporter as its header (nil: the
  /// output of one that never finished, printed at the run's end).
  private struct Block {
    var finish: RunEvent?
    var name: String
    var failed: Bool
    var duration: Double
    var output: BlockLines
    /// When it finished, in seconds since the epoch (a held block is printed later).
    var ended = Self.wallClock()

    static func wallClock() -> Double {
      var now = timespec()
      clock_gettime(CLOCK_REALTIME, &now)
      return Double(now.tv_sec) + Double(now.tv_nsec) / 1e9
    }
  }

  // keep-order: the run's operations in declaration order, which have finished, the blocks
  // that wait, and the first not finished.
  private var position: [String: Int] = [:]
  private var finished: [Bool] = []
  private var waiting: [Int: Block] = [:]
  private var next = 0

  init(lines: PlainReporter, keepOrder: Bool, ci: CIFolding?, limit: Int) {
    (self.lines, self.keepOrder, self.ci, self.limit) = (lines, keepOrder, ci, limit)
  }

  /// The reporter's, and every line of output as it comes.
  var interests: EventInterests { lines.interests.union(.output) }

  /// `--output keep-order`: the operations of the run about to start (any order): blocks
  /// come in their declaration order. Groups are left out (a group ends after its children,
  /// whose blocks would all wait for it); so are operations declared while the run goes on,
  /// whose blocks are printed when they finish.
  /// Whether blocks wait for those declared before them (`--output keep-order`).
  var keepsOrder: Bool { keepOrder }

  func order(_ operations: [OperationNode]) {
    guard keepOrder else { return }
    let ordered = operations.filter { !$0.isGroup }.sorted { $0.id < $1.id }
    position = Dictionary(ordered.enumerated().map { ($1.name, $0) }, uniquingKeysWith: { a, _ in a })
    finished = Array(repeating: false, count: ordered.count)
    waiting = [:]
    next = 0
  }

  func receive(_ event: RunEvent) {
    switch event {
    case .output(_, let name, _, let text):
      open[name, default: BlockLines(limit: limit)].add(output: text)
    case .message(_, let operation?, let text, false):
      // A print of several lines is several lines of the block, each after its `    | `.
      for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
        open[operation, default: BlockLines(limit: limit)].add(line: String(line))
      }
    case .operationFinish(let time, let name, let outcome, let duration, let details):
      guard let output = open.removeValue(forKey: name), !output.isEmpty else {
        lines.receive(event)
        return done(name)
      }
      // The header without the kept tail: the block prints the lines itself.
      let header = details.map {
        FinishDetails(
          error: $0.error, traceback: $0.traceback, output: "", errorKind: $0.errorKind, reuse: $0.reuse, why: $0.why)
      }
      let finish = RunEvent.operationFinish(
        time: time, name: name, outcome: outcome, duration: duration, details: header)
      arrived(Block(finish: finish, name: name, failed: outcome == .failed, duration: duration, output: output), name)
    case .successes(let time, let operations):
      // Those without a block told together, as they came, around those with one.
      var plain: [Success] = []
      func tell() {
        guard !plain.isEmpty else { return }
        lines.receive(.successes(time: time, operations: plain))
        for op in plain { done(op.name) }
        plain = []
      }
      for op in operations {
        guard let output = open.removeValue(forKey: op.name), !output.isEmpty else {
          plain.append(op)
          continue
        }
        tell()
        let finish = RunEvent.operationFinish(
          time: time, name: op.name, outcome: .succeeded, duration: op.duration, details: nil)
        arrived(Block(finish: finish, name: op.name, failed: false, duration: op.duration, output: output), op.name)
      }
      tell()
    case .runFinish:
      // What still waits (or still runs: output of an operation that never finished).
      for index in waiting.keys.sorted() { show(waiting[index]!) }
      waiting = [:]
      for (name, output) in open where !output.isEmpty {
        show(Block(finish: nil, name: name, failed: false, duration: 0, output: output))
      }
      open = [:]
      if printed > 0, let line = ci?.beforeSummary { print(line) }
      lines.receive(event)
    default:
      lines.receive(event)
    }
  }

  /// `name` finished with `block`: printed now, or (keep-order) when those before it are.
  private func arrived(_ block: Block, _ name: String) {
    guard keepOrder, let index = position[name] else { return show(block) }
    if index == next {
      show(block)
    } else {
      waiting[index] = block
    }
    done(name)
  }

  /// `name` finished (keep-order): the blocks it held back are printed.
  private func done(_ name: String) {
    guard keepOrder, let index = position[name] else { return }
    finished[index] = true
    while next < finished.count && finished[next] {
      if let block = waiting.removeValue(forKey: next) { show(block) }
      next += 1
    }
  }

  /// Prints `block`: its header (the reporter's finish line) and its lines, folded on CI
  /// unless it failed; a success's block not at all when the reporter is quiet.
  private func show(_ block: Block) {
    if !block.failed && lines.verbosity == .quiet { return }
    printed += 1
    let title = "\(block.name) (\(block.failed ? "FAILED, " : "")\(formatFixed(block.duration, 2)) s)"
    // GitLab shows a section's time: from the second the operation started to the one it ended.
    let started = Int((block.ended - block.duration).rounded(.down))
    let ended = max(Int(block.ended.rounded(.up)), started + (block.duration > 0 ? 1 : 0))
    if let start = ci?.start(title, number: printed, failed: block.failed, now: started) {
      print(start)
    }
    if let finish = block.finish { lines.receive(finish) }
    let write: (String) -> Void = block.failed ? { self.lines.failure($0) } : { print($0) }
    let dropped = block.output.dropped
    if dropped > 0 {
      write("    | … \(dropped) earlier line\(dropped == 1 ? "" : "s") not kept (--output-limit)")
    }
    for line in block.output.kept { write("    | " + PlainReporter.shown(Substring(line))) }
    if let end = ci?.end(number: printed, failed: block.failed, now: ended) { print(end) }
  }
}
