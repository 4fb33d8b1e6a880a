// The event loop: timers, command completions, signals and stall detection.
import Dispatch
import Dispatch
import FoundationEssentials
import Glibc
import HeapModule

struct TimerEntry: Comparable {
  let deadline: Double
  let id: Int
  // Heap pops max first: the earliest deadline, then the earliest timer.
  static func < (a: TimerEntry, b: TimerEntry) -> Bool {
    a.deadline != b.deadline ? a.deadline > b.deadline : a.id > b.id
  }
}

extension Scheduler {
  /// Calls `action` on the scheduler's thread after `seconds`. Returns a token for `cancelTimer`.
  @discardableResult
  public func after(_ seconds: Double, _ action: @escaping () -> Void) -> Int {
    nextToken += 1
    timers.insert(TimerEntry(deadline: clock.now + Limits.wait(seconds), id: nextToken))
    timerActions[nextToken] = action
    return nextToken
  }

  public func cancelTimer(_ token: Int) { timerActions[token] = nil }

  /// Runs a command for `op` (its output is recorded on `op`); `completion` gets the result
  /// on the scheduler's thread. Returns a token for `signalCommand`.
  @discardableResult
  /// `remote`: an operation's own command, which runs where its queue's executor says
  /// (`sh()` inside a body runs here).
  public func runCommand(_ spec: CommandSpec, for op: OperationNode?, remote: Bool = false,
                         completion: @escaping (CommandResult) -> Void) -> Int {
    nextToken += 1
    let token = nextToken
    commandHandlers[token] = completion
    commandOwners[token] = op
    if remote, let executor = op?.queue.executor {
      remoteCommands[token] = executor
      executor.start(spec, token: token)
    } else {
      processes.start(spec, token: token)
    }
    return token
  }

  /// An executor of this run, ended at every exit (`endExecutors`).
  public func use(_ executor: any CommandExecutor) {
    if !executors.contains(where: { $0 === executor }) { executors.append(executor) }
  }

  /// Nothing any executor started outlives the run.
  public func endExecutors() {
    for executor in executors { executor.endAll() }
  }

  /// Asks a command to stop: SIGTERM to its process group, SIGKILL after `killGrace`.
  public func terminateCommand(_ token: Int) {
    guard commandHandlers[token] != nil, killTimers[token] == nil else { return }
    let executor = (remoteCommands.isEmpty ? nil : remoteCommands[token]) ?? processes
    executor.signal(token: token, SIGTERM)
    killTimers[token] = after(killGrace) { [weak self] in
      self?.killTimers[token] = nil
      executor.signal(token: token, SIGKILL)
    }
  }

  /// Runs blocking `work` off the scheduler's thread (on `queue`: a serial one serializes,
  /// as prompts must be); `then` gets its answer on the scheduler's thread.
  public func perform(on queue: DispatchQueue = .global(), _ work: @escaping @Sendable () -> String?,
                      then: @escaping (String?) -> Void) {
    nextToken += 1
    let token = nextToken
    completionHandlers[token] = then
    let inbox = self.inbox
    queue.async { inbox.post(.completion(token: token, answer: work())) }
  }

  // MARK: Waiting between operations (deadlock detection)

  /// Records that the body of `waiter` waits for `target`. Returns the cycle
  /// (`waiter, …, waiter`) if that wait can never end, and then records nothing.
  public func beginWait(_ waiter: OperationNode, for target: OperationNode) -> [OperationNode]? {
    // What blocks a node: its unfinished dependencies and the operations its body waits for.
    var parent: [OperationNode: OperationNode] = [:]
    var seen: Set<OperationNode> = [target]
    var stack = [target]
    while let node = stack.popLast() {
      if node === waiter {
        var path = [node]
        var cursor = node
        while let p = parent[cursor] { path.append(p); cursor = p }
        return [waiter] + path.reversed()
      }
      let blockers = node.dependencies.filter { !$0.isFinished } + Array(waits[node] ?? [])
      for next in blockers where seen.insert(next).inserted {
        parent[next] = node
        stack.append(next)
      }
    }
    waits[waiter, default: []].insert(target)
    return nil
  }

  public func endWait(_ waiter: OperationNode, for target: OperationNode) {
    waits[waiter]?.remove(target)
  }

  // MARK: The loop

  /// Runs until `done()` holds. Returns false if it stopped because nothing could make
  /// progress any more (a stall) while `done()` was still false.
  @discardableResult
  public func run(until done: () -> Bool, onStall: () -> Bool = { false }) -> Bool {
    defer { emitHeldSuccesses() }  // whoever waited (a REPL's prompt, a top-level wait) sees them
    while true {
      // Bodies start inside pump and may make work ready on a queue it already passed
      // (or one they just made): pump until nothing more starts.
      while pump() {}
      tickIfDue()
      if done() { return true }
      // Both, every time: a body resumed by a timer at each of its time slices must not keep
      // commands' exits and output waiting in the inbox until it ends.
      let fired = fireDueTimers()
      if handleInbox() || fired { continue }
      if done() { return true }
      let idle = commandHandlers.isEmpty && timerActions.isEmpty && completionHandlers.isEmpty && inbox.isEmpty
      if idle {
        if cancelUnstartable() || onStall() { continue }
        return done()
      }
      dropCancelledTimers()
      let deadlines = [timers.max?.deadline, tickInterval == nil ? nil : nextTick].compactMap { $0 }
      clock.idle(until: deadlines.min(), inbox: inbox)
    }
  }

  func fireDueTimers() -> Bool {
    var fired = false
    let now = clock.now
    while let next = timers.max, next.deadline <= now {
      timers.removeMax()
      if let action = timerActions.removeValue(forKey: next.id) {
        action()
        fired = true
      }
    }
    return fired
  }

  func dropCancelledTimers() {
    while let next = timers.max, timerActions[next.id] == nil { timers.removeMax() }
  }

  func handleInbox() -> Bool {
    if !commandHandlers.isEmpty { inbox.watchIfDue() }  // busy all along: still see commands end
    let items = inbox.drain()
    for item in items {
      switch item {
      case .processOutput(let token, let stream, let text):
        guard let op = commandOwners[token] else { break }
        if !remoteCommands.isEmpty, let remote = remoteCommands[token] {
          let shown = remote.shown(text, stream: stream)
          if !shown.isEmpty { record(output: shown, stream: stream, for: op) }
        } else {
          record(output: text, stream: stream, for: op)
        }
      case .processBytes(let token, _, let bytes):
        commandOwners[token]?.keepOutput(bytes: bytes)
      case .processOverwrite(let token, let text):
        commandOwners[token]?.outputObserver?(text)
      case .commandState(let token, let state):
        guard let op = commandOwners[token], op.remoteState != state else { break }
        if !state.queued, op.remoteState?.queued == true { op.remoteStartTime = remoteStart(of: op, state) }
        op.remoteState = state
        let now = clock.now
        announcer.remoteState(of: op, state, startedAt: elapsed(at: op.startTime ?? now), at: elapsed(at: now))
      case .processExited(let token, var result):
        commandOwners[token] = nil
        if !remoteCommands.isEmpty, let remote = remoteCommands.removeValue(forKey: token) { result = remote.finished(result) }
        if let timer = killTimers.removeValue(forKey: token) { cancelTimer(timer) }
        if let handler = commandHandlers.removeValue(forKey: token) {
          handler(result)
        }
      case .signal:
        absorbSignals()
      case .completion(let token, let answer):
        completionHandlers.removeValue(forKey: token)?(answer)
      case .wake:
        break
      }
    }
    return !items.isEmpty
  }

  // MARK: Queue control

  public func suspend(_ queue: WorkQueue) { queue.isSuspended = true }
  public func resume(_ queue: WorkQueue) { queue.isSuspended = false }
  public func cancelAll(_ queue: WorkQueue, reason: String = "cancelled") {
    for op in queue.operations where !op.isFinished { completely { cancel(op, reason: reason) } }
  }
}
