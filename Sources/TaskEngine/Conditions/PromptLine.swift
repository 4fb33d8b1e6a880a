// PromptLine: the `confirm` prompts' queue: one question at a time, first come first served.

/// Runs one body at a time between its start and its `finished()` (prompts wait for each
/// other, like alerts), the others queued in order. A queued body whose operation is no
/// longer pending when its turn comes (cancelled by a stop or Ctrl-C) is dropped unrun:
/// nothing waits for its answer any more.
final class PromptLine {
  private var busy = false
  /// Queued bodies, with whether each one's answer is still wanted.
  private var waiting: [(wanted: () -> Bool, run: () -> Void)] = []

  /// Runs `body` now if the line is free, else when the bodies before it have finished (if
  /// `wanted` still says so then).
  func enter(wanted: @escaping () -> Bool, _ body: @escaping (_ finished: @escaping () -> Void) -> Void) {
    let run = { [unowned self] in
      busy = true
      body { [unowned self] in
        busy = false
        while !waiting.isEmpty {
          let next = waiting.removeFirst()
          if next.wanted() { return next.run() }
        }
      }
    }
    if busy { waiting.append((wanted, run)) } else { run() }
  }
}
