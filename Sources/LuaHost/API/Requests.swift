// Requests: what a yielding primitive asks the scheduler for (sleep, sh, execute, wait, run).
import CLua
import CLuaShim
import FoundationEssentials
import TaskEngine

extension ScriptHost {
  /// Reads a request from `co`'s stack (arguments at base...top), pops it and starts serving it.
  func handleRequest(_ co: LuaCoroutine, kind: String, base: Int32, top: Int32) {
    let s = LuaStack(L: co.thread)
    if let op = co.op, op.isCancelled, !co.isCleanup {
      s.setTop(base - 3)
      return fail(co, op.error ?? "cancelled")
    }
    if co.op?.isPaused == true, case .body(let body) = co.onEnd,
      body.holds(co, { [unowned self] in handleRequest(co, kind: kind, base: base, top: top) })
    {
      return  // paused: the request is made when the operation is resumed
    }
    if co.op == nil, scheduler.halted {
      s.setTop(base - 3)  // nothing starts after an interrupt, not even from the top level
      return fail(co, scheduler.endedBy ?? "interrupted")
    }
    if dryRun, co.op == nil, kind != "sh", kind != "choose" {
      return dryRunRequest(co, kind: kind, base: base, top: top)
    }
    do {
      switch kind {
      case "sleep":
        guard let seconds = s.number(base), seconds >= 0, seconds.isFinite else {
          throw ScriptError(
            "bad argument #1 to 'sleep' (a finite number of seconds ≥ 0 expected, got \(describeArgument(s, base)))")
        }  // beyond Limits.maxSeconds: until cancelled
        s.setTop(base - 3)
        let timer = scheduler.after(seconds) { [unowned self] in
          co.pending = nil
          succeed(co)
        }
        co.pending = .sleep(timer: timer)
      case "sh":
        var spec = try commandSpec(s, base, options: base + 1, function: "sh")
        spec.sandbox = co.op?.body?.sandbox
        // A cleanup's commands are not its operation's: their output is not shown as the
        // failed command's (sh() still returns it); they get its qos all the same.
        let owner = co.isCleanup ? nil : co.op
        spec.qos = co.op?.qos
        if let op = co.op, op.interactive, !co.isCleanup { spec.usesTerminal = true }
        let check = s.type(base + 1) == LUA_TTABLE ? s.rawGet(base + 1, "check") != LUA_TBOOLEAN || s.boolean(-1) : true
        s.setTop(base - 3)
        // A dry run's top level runs nothing: the dry-run executor says what it would run.
        let executor = dryRun && co.op == nil ? dryRunExecutor() : nil
        let token = scheduler.runCommand(spec, for: owner, on: executor) { [unowned self] result in
          co.pending = nil
          if let reason = co.interruptReason { return fail(co, reason) }
          if let op = co.op, op.isCancelled, !co.isCleanup {
            scheduler.timedOut(op, outputIn: result.whereOutputIs)  // the operation fails: its error names the files
            return fail(co, op.error ?? "cancelled")
          }
          if check && result.status != 0 {
            return fail(co, "command failed: \(spec.display): \(exitDescription(result))" + result.explanation)
          }
          succeed(co) { s in
            self.pushCommandResult(result, on: s); return 1
          }
        }
        co.pending = .command(token: token)
      case "choose":
        try chooseRequest(co, base: base)
      case "execute":
        guard let command = s.stringOrNumber(base) else { throw s.badArgument(1, "os.execute", "string") }
        s.setTop(base - 3)
        executeRequest(co, command: command)
      case "wait", "run":
        var ops: [OperationNode] = []
        for i in base...max(base, top) where i <= top {
          guard let op = operation(at: i, on: s) else {
            throw ScriptError(
              "bad argument #\(i - base + 1) to '\(kind)' (operation expected, got \(describeArgument(s, i)))")
          }
          ops.append(op)
        }
        s.setTop(base - 3)
        if kind == "run" { try runRequest(co, ops) } else { try waitRequest(co, ops, raising: true) }
      case "wait_queue":
        guard let queue = queue(at: base, on: s) else { throw ScriptError("bad self for 'wait' (queue expected)") }
        s.setTop(base - 3)
        try waitRequest(co, queue.operations, raising: false)
      default:
        throw ScriptError("unknown request '\(kind)'")
      }
    } catch {
      s.setTop(base - 3)
      fail(co, ScriptError(raising: error))
    }
  }

  /// A dry run (`-n`, `taskrun graph`) runs nothing, not even from the script's top level:
  /// `sh` goes to the `DryRunExecutor` (it says what it would run and returns
  /// `{ status = 0, stdout = "", stderr = "" }`), `sleep` returns at once, `run` returns true
  /// and `wait` nothing; what `run` and `wait` name stays in the plan. Arguments are checked
  /// as in a real run.
  func dryRunRequest(_ co: LuaCoroutine, kind: String, base: Int32, top: Int32) {
    LuaStack(L: co.thread).setTop(base - 3)
    if kind == "run" {
      succeed(co) { s in
        s.push(true); return 1
      }
    } else {
      succeed(co)
    }
  }

  /// A bad argument as Lua writes it: a number as `tostring` shows it (256, 2.5, 1e+300),
  /// but NaN and the infinities as every other message does (`formatNumber`: `nan`, where
  /// glibc's tostring says `-nan` for 0/0), anything else by its type.
  func exitDescription(_ result: CommandResult) -> String {
    let base = result.failureDescription
    let tail = result.stderr.split(separator: "\n").suffix(1).joined()
    return tail.isEmpty || base.hasPrefix("could not start") ? base : "\(base) (\(tail))"
  }

  /// `{ status =, stdout =, stderr = }` with the output byte for byte; past the memory limit
  /// `stdout` is the tail and `stdout_file` names the file that holds all of it.
  func pushCommandResult(_ result: CommandResult, on s: LuaStack) {
    s.newTable(hash: 5)
    s.push(Int(result.status))
    s.rawSet(-2, "status")
    for (key, bytes, file) in [
      ("stdout", result.stdoutBytes, result.stdoutFile),
      ("stderr", result.stderrBytes, result.stderrFile)
    ] {
      bytes.withUnsafeBufferPointer { buffer in
        _ = buffer.withMemoryRebound(to: CChar.self) { lua_pushlstring(s.L, $0.baseAddress, $0.count) }
      }
      s.rawSet(-2, key)
      if let file {  // removed at exit unless a failure message names it
        s.push(file)
        s.rawSet(-2, key + "_file")
      }
    }
  }

  /// `wait(op, ...)`: schedules them if needed, returns their results once all finished;
  /// raises if one did not succeed, or at once if the wait could never end (a deadlock).
  func waitRequest(_ co: LuaCoroutine, _ ops: [OperationNode], raising: Bool) throws {
    try startIfNeeded(ops, for: co)
    if let waiter = co.op {
      for target in ops where !target.isFinished {
        if let cycle = scheduler.beginWait(waiter, for: target) {
          for other in ops { scheduler.endWait(waiter, for: other) }
          let names = cycle.map { "'\($0.name)'" }
          throw ScriptError(
            "deadlock: \(names[0]) waits for \(names[1])"
              + names.dropFirst(2).map { ", which waits for \($0)" }.joined())
        }
      }
    }
    co.pending = .wait(ops)
    if let waiter = co.op, ops.contains(where: { !$0.isFinished }) { scheduler.yieldSlot(waiter) }
    whenAllFinished(ops) { [unowned self] in
      guard case .wait = co.pending else { return }
      co.pending = nil
      if let waiter = co.op { for target in ops { scheduler.endWait(waiter, for: target) } }
      let answer = { [unowned self] in
        if raising, let bad = ops.first(where: { !$0.succeeded }) {
          let message = "'\(bad.name)' \(bad.outcome!.rawValue)" + (bad.error.map { ": \($0)" } ?? "")
          if co.op == nil { failedWait = message }
          return fail(co, message)
        }
        succeed(co, room: ops.count + 4) { s in
          guard raising else { return 0 }
          for op in ops { self.pushResult(of: op, on: s) }
          return Int32(ops.count)
        }
      }
      if let waiter = co.op { scheduler.reclaimSlot(waiter, then: answer) } else { answer() }
    }
  }

  /// `run(op, ...)`: runs them and their dependencies (none given: everything declared and
  /// not yet run); returns true, or false and a summary of what failed.
  func runRequest(_ co: LuaCoroutine, _ given: [OperationNode]) throws {
    let ops = given.isEmpty ? scheduler.operations.filter { !$0.isScheduled } : given
    if co.op == nil {
      scheduler.clearStop()
      if freshRunPerRequest { scheduler.beginNewRun() }
    }
    try startIfNeeded(ops, for: co)
    let all = scheduler.plan(for: ops)
    co.pending = .wait(all, isRun: true)
    if let runner = co.op, all.contains(where: { !$0.isFinished }) { scheduler.yieldSlot(runner) }
    whenAllFinished(all) { [unowned self] in
      guard case .wait = co.pending else { return }
      co.pending = nil
      let answer = { [unowned self] in
        let bad = all.filter { !$0.succeeded && !$0.skipped }
        if bad.isEmpty {
          return succeed(co) { s in
            s.push(true); return 1
          }
        }
        let text = bad.map { "\($0.name) \($0.outcome!.rawValue)" + ($0.error.map { ": \($0)" } ?? "") }
          .joined(separator: "\n")
        // The REPL's run after Ctrl-C (see wakeTopLevel): the interrupt has done its work, so
        // its hook does not raise as the line takes the answer; a request after it still does.
        if co.op == nil, freshRunPerRequest, scheduler.endedBy == nil, scheduler.halted { setInterrupt(false) }
        succeed(co) { s in
          s.push(false); s.push(text); return 2
        }
      }
      if let runner = co.op { scheduler.reclaimSlot(runner, then: answer) } else { answer() }
    }
  }

  func startIfNeeded(_ ops: [OperationNode], for co: LuaCoroutine) throws {
    let unscheduled = ops.filter { !$0.isScheduled }
    guard !unscheduled.isEmpty else { return }
    // Only names the run needs: another operation may name one declared later.
    try scheduler.resolveNames(neededBy: unscheduled)
    scheduler.schedule(unscheduled)
  }

  func whenAllFinished(_ ops: [OperationNode], _ action: @escaping () -> Void) {
    var remaining = ops.filter { !$0.isFinished }.count
    if remaining == 0 { return action() }
    for op in ops where !op.isFinished {
      scheduler.onFinish(op) { _ in
        remaining -= 1
        if remaining == 0 { action() }
      }
    }
  }

  /// Cancels what a suspended coroutine waits on and makes its primitive raise `reason`.
  func interruptPending(_ co: LuaCoroutine, reason: String) {
    switch co.pending {
    case .sleep(let timer)?:
      scheduler.cancelTimer(timer)
      co.pending = nil
      fail(co, reason)
    case .command(let token)?:
      scheduler.terminateCommand(token)  // its completion then raises `reason`
    case .execute(let execution)?:
      stopExecution(execution, reason: reason)  // its exit then raises `reason`
    case .wait(let ops, _)?:
      if let waiter = co.op { for target in ops { scheduler.endWait(waiter, for: target) } }
      co.pending = nil
      fail(co, reason)
    case .reschedule?, nil:
      break  // running or about to run: the hook sees the cancelled flag
    }
  }

  /// When the loop has nothing left to do, coroutines still waiting on operations will never
  /// wake: fail each with a message naming what it waits for. Returns whether it did.
  func failStalledWaits() -> Bool {
    var changed = false
    for co in coroutines.live {
      if case .wait(let ops, _)? = co.pending {
        let open = ops.filter { !$0.isFinished }.map { scheduler.explain($0) }
        interruptPending(co, reason: "deadlock: nothing can make progress; " + open.joined(separator: "; "))
        changed = true
      }
    }
    return changed
  }
}
