// Scheduler+Terminal: interactive operations start alone and keep the terminal while they run.

extension Scheduler {
  /// Makes `op` interactive (`interactive = true`): it starts only when nothing else runs,
  /// nothing starts while it runs, and its commands get the terminal (`CommandSpec.usesTerminal`).
  public func makeInteractive(_ op: OperationNode) {
    guard !op.interactive else { return }
    op.extras.interactive = true
    terminal.declared += 1
  }

  /// Whether any operation but `op` holds a slot (a body that waits gave its slot back, and a
  /// group holds none): an interactive operation starts when none does.
  func othersRunning(than op: OperationNode) -> Bool {
    executing.contains { $0 !== op && !$0.isGroup && !$0.slotYielded }
  }

  /// Whether an interactive operation executes and holds its slot: nothing may start (true
  /// as soon as `start` gave it the terminal, within the `pump` that started it).
  var terminalHeld: Bool {
    guard terminal.declared > 0, let holder = terminal.holder else { return false }
    return !holder.slotYielded
  }

  /// What `pump` does while the terminal is taken or awaited: nil when it is neither (pump as
  /// ever), else whether it started the waiting interactive operation.
  func pumpForTerminal() -> Bool? {
    // While its body waits for other operations (it gave its slot back), they may run.
    if let holder = terminal.holder, !holder.slotYielded { return false }
    guard let op = terminal.waiting else { return nil }
    guard op.state == .ready else {  // cancelled while it waited
      terminal.waiting = nil
      return nil
    }
    if op.isPaused || othersRunning(than: op) { return false }
    terminal.waiting = nil
    guard acquire(op) else {
      admission.park(op)
      return false
    }
    start(op)
    return true
  }

  /// `op`, taken from its queue or the parked, is interactive and others run: it waits for
  /// them (and pump starts nothing more). False when it may start now.
  func waitsForTheTerminal(_ op: OperationNode) -> Bool {
    guard op.interactive, othersRunning(than: op) else { return false }
    terminal.waiting = op
    return true
  }

  /// `op` starts with the terminal: a live view steps aside, as for a question.
  func takeTerminal(_ op: OperationNode, at time: Double) {
    terminal.holder = op
    announcer.prompt("'\(op.name)' has the terminal", at: time)
  }

  /// `op` stopped executing: if it had the terminal, the view comes back.
  func leaveTerminal(_ op: OperationNode, at time: @autoclosure () -> Double) {
    guard terminal.holder === op else { return }
    terminal.holder = nil
    announcer.prompt(nil, at: time())
  }
}
