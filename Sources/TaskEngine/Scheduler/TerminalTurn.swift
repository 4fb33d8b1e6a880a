// TerminalTurn: an interactive operation runs alone, with the terminal: who has it, who waits for it.

/// The scheduler's bookkeeping for interactive operations (`interactive = true`): one starts
/// only when no other operation runs, and nothing else starts until it ends. Untouched (and
/// never looked at by `pump`) while the run declares none.
struct TerminalTurn {
  /// Interactive operations declared: while none is, starting an operation looks at nothing.
  var declared = 0
  /// The interactive operation executing now: nothing else starts until it ends.
  var holder: OperationNode?
  /// The interactive operation next to start, once what runs has ended; nothing else starts
  /// meanwhile (else it would wait for ever behind a busy queue).
  var waiting: OperationNode?
}
