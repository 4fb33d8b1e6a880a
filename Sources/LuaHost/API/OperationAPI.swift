// The operation API: operation{...}, its fields and methods, and Lua function bodies.
import CLua
import CLuaShim
import TaskEngine

/// A Lua function run as an operation's body, in its own coroutine.
final class LuaFunctionBody: OperationBody {
  let function: Int32
  unowned let host: ScriptHost
  /// The coroutine running it, while it runs (stored and cleared on the scheduler's thread:
  /// no access overlaps another, see OperationNode).
  @exclusivity(unchecked) var coroutine: LuaCoroutine?
  /// What its `sh()` commands ask `--sandbox` for (`sandbox = {…}`).
  let sandbox: SandboxGrant?
  init(function: Int32, host: ScriptHost, sandbox: SandboxGrant?) {
    self.function = function
    self.host = host
    self.sandbox = sandbox
  }
  var summary: String { "lua function" }
  /// Its code and upvalues as a fingerprint covers them (made on first use).
  @exclusivity(unchecked) private var code: String?
  var identity: [OperationRecord.Part] {
    if code == nil { code = host.codeIdentity(function) }
    return [OperationRecord.Part("code", code!)]
  }
  var cheapIdentity: Bool { false }
  func start(_ operation: OperationNode, scheduler: Scheduler) { host.startBody(operation, self) }
  /// While its operation is paused: the steps its coroutine would have taken (a request it
  /// made, an answer to one), taken when it is resumed; and what was left of its deadline.
  @exclusivity(unchecked) var held: [() -> Void] = []
  @exclusivity(unchecked) var deadlineLeft: Double?

  func pause(_ operation: OperationNode, scheduler: Scheduler) {
    guard let control = coroutine?.control, control.pointee.deadline > 0 else { return }
    deadlineLeft = max(0, control.pointee.deadline - tl_monotonic())
    control.pointee.deadline = 0  // a body that computes on while paused is not timed meanwhile
  }

  func resume(_ operation: OperationNode, scheduler: Scheduler) {
    if let left = deadlineLeft, let control = coroutine?.control {
      control.pointee.deadline = tl_monotonic() + max(left, 1e-6)
    }
    deadlineLeft = nil
    let steps = held
    held = []
    for step in steps { host.resumeSoon(step) }
  }

  /// Whether `co`, this body's coroutine, must wait for a resume before `step`; if so it is
  /// kept for then.
  func holds(_ co: LuaCoroutine, _ step: @escaping () -> Void) -> Bool {
    guard co === coroutine, let op = co.op, op.isPaused else { return false }
    held.append(step)
    return true
  }

  func interrupt(_ operation: OperationNode, scheduler: Scheduler, reason: String) {
    guard let coroutine else { return }
    coroutine.control.pointee.cancelled = 1  // for the hook; and wake what it waits on
    host.tests.noteBlockStop(operation, thread: coroutine.thread)  // while its stack still says where
    host.interruptPending(coroutine, reason: reason)
  }
}

/// A Lua value kept alive in the registry (an operation's result).
final class LuaReference {
  let ref: Int32
  init(_ ref: Int32) { self.ref = ref }
}

extension ScriptHost {
  /// `operation { name =, run = | sh =, after =, queue =, priority =, when =, … }`
  func createOperation(_ s: LuaStack) throws -> Int32 {
    guard s.type(1) == LUA_TTABLE else { throw s.badArgument(1, "operation", "table") }
    let spec = try readSpec(s, 1, operationKeys, in: subject("operation", s, 1))
    var plainName = false
    let name = try stringField(s, at: spec[.name], "name", in: "operation", plain: &plainName)
    if let name {
      if name.isEmpty { throw ScriptError("operation: field 'name' must not be empty") }
      if !plainName { try displayText(name, "operation: field 'name'") }
    }
    func what() -> String { name.map { "operation '\($0)'" } ?? "operation" }

    var body: (any OperationBody)?
    let run = spec[.run], sh = spec[.sh]
    if !s.isNil(run) {
      guard s.type(run) == LUA_TFUNCTION else {
        throw ScriptError("\(what()): field 'run' must be a function (got \(s.typeName(run)))")
      }
      if !s.isNil(sh) { throw ScriptError("\(what()): give either 'run' or 'sh', not both") }
    }
    let grant = s.isNil(spec[.sandbox]) ? nil : try sandboxGrant(s, spec[.sandbox], what: what())
    let qos = s.isNil(spec[.qos]) ? nil : try qualityOfService(s, spec[.qos], what: what())
    let service = s.isNil(spec[.service]) && s.isNil(spec[.ready]) ? nil : try serviceSpec(s, spec, what: what())
    let interactive = try booleanField(s, at: spec[.interactive], "interactive", in: what()) ?? false
    if !s.isNil(sh) {
      var command = try commandSpec(s, sh, options: 1, function: what(), field: "sh")
      command.sandbox = grant
      command.qos = qos
      if interactive { command.usesTerminal = true }
      body = service.map { ServiceBody(command, ready: $0, keeper: scheduler.services) } ?? CommandBody(command)
    } else if service != nil {
      throw ScriptError("\(what()): a service runs a command: give 'sh' (not 'run')")
    } else if !s.isNil(spec[.env]) || !s.isNil(spec[.cwd]) || !s.isNil(spec[.progress]) {
      throw ScriptError("\(what()): 'env', 'cwd' and 'progress' apply to 'sh' commands only")
    }
    let progressPattern =
      s.isNil(spec[.progress]) ? nil : try stringField(s, at: spec[.progress], "progress", in: what())
    if let progressPattern { try checkProgressPattern(progressPattern, what: what()) }

    var queue: WorkQueue?
    if !s.isNil(spec[.queue]) {
      queue = self.queue(at: spec[.queue], on: s)
      if queue == nil {
        throw ScriptError("\(what()): field 'queue' must be a queue (got \(s.typeName(spec[.queue])))")
      }
    }
    // What the host keeps for it counts against the Lua heap's cap (given back if not made).
    let bytes = HostCharge.operation + (name?.utf8.count ?? 0)
    try charge(bytes, on: s)
    if !s.isNil(run) {
      s.pushValue(run)
      body = LuaFunctionBody(function: s.ref(), host: self, sandbox: grant)
    }
    let op: OperationNode
    do {
      op = try scheduler.makeOperation(name: name, queue: queue, body: body)
    } catch let error as EngineError {
      uncharge(bytes, on: s)
      throw ScriptError(error.description)
    }
    if let progressPattern { watchProgress(of: op, pattern: progressPattern) }
    do {
      try configure(op, from: s, spec, what: what())
      // Most specs set neither: an absent field costs one type check, not a message made.
      if !s.isNil(spec[.cleanup]) || !s.isNil(spec[.cleanupGrace]) { try attachCleanup(op, s, spec, what: what()) }
      if let qos { op.qos = qos }  // for sh() in its body
      if interactive { scheduler.makeInteractive(op) }  // alone, with the terminal (and sh() in its body)
      if !s.isNil(spec[.inputs]) || !s.isNil(spec[.outputs]) || !s.isNil(spec[.depfile]) || !s.isNil(spec[.key])
        || !s.isNil(spec[.fresh])
      {
        try attachFreshness(op, s, spec, what: what())  // FreshnessAPI
      }
    } catch {
      scheduler.discard(op)
      uncharge(bytes, on: s)
      throw error
    }
    adoptProgress(of: op)
    if let producer = current?.op {
      // Created by a running body: it joins the running graph at once, in the producer's group.
      defer { scheduler.produced(op, by: producer) }
      do {
        try scheduler.resolveNames([op])
        if let group = producer.group { try scheduler.add(op, to: group) }
      } catch let error as EngineError {
        throw ScriptError(error.description)
      }
      if op.group == nil { scheduler.schedule([op]) }
    }
    pushHandle(.operation, id: op.id, on: s)
    return 1
  }

  /// `service = true` and its `ready = condition` (or none: ready once started); nil when
  /// `service` is false. `ready` without `service` is an error.
  private func serviceSpec(_ s: LuaStack, _ spec: SpecSlots, what: @autoclosure () -> String) throws
    -> (any OperationCondition)??
  {
    let flag = spec[.service], ready = spec[.ready]
    guard s.isNil(flag) || s.type(flag) == LUA_TBOOLEAN else {
      throw ScriptError("\(what()): field 'service' must be a boolean (got \(s.typeName(flag)))")
    }
    guard s.boolean(flag) else {
      if !s.isNil(ready) { throw ScriptError("\(what()): field 'ready' applies to a service (service = true)") }
      return nil
    }
    if s.isNil(ready) { return .some(nil) }
    guard case .condition(let condition)? = condition(at: ready, on: s) else {
      throw ScriptError(
        "\(what()): field 'ready' must be a condition, such as reachable(\"127.0.0.1\", 8080) (got \(s.typeName(ready)))"
      )
    }
    return .some(condition)
  }

  /// The fields operations and groups share, from their slots.
  func configure(
    _ op: OperationNode, from s: LuaStack, _ spec: SpecSlots,
    what: @autoclosure () -> String
  ) throws {
    // Most specs set none of these: an absent field costs one type check, not a call.
    if !s.isNil(spec[.priority]) { op.priority = try priority(s, spec[.priority], what: what()) }
    if !s.isNil(spec[.when]), let when = try stringField(s, at: spec[.when], "when", in: what()) {
      guard let value = RunPolicy(rawValue: when) else {
        throw ScriptError("\(what()): field 'when' must be one of succeeded, finished, failed (got '\(when)')")
      }
      op.policy = value
    }
    if !s.isNil(spec[.desc]), let desc = try stringField(s, at: spec[.desc], "desc", in: what()) {
      guard desc.utf8.count <= 1000 else {
        throw ScriptError("\(what()): field 'desc' must be one line of at most 1000 bytes")
      }
      op.desc = try displayText(desc, "\(what()): field 'desc'")
    }
    if !s.isNil(spec[.weight]), let weight = try numberField(s, at: spec[.weight], "weight", in: what()) {
      op.weight = try number(weight, "weight", 0...Limits.maxWeight, in: what())
    }
    if !s.isNil(spec[.timeout]), let timeout = try numberField(s, at: spec[.timeout], "timeout", in: what()) {
      let timeout = try positiveSeconds(timeout, "timeout", in: what())
      op.timeout = timeout > Limits.maxSeconds ? nil : timeout  // `timeout = 1e10`: none
    }
    if !s.isNil(spec[.retries]), let retries = try numberField(s, at: spec[.retries], "retries", in: what()) {
      op.retry = RetryPolicy(max: try count(retries, "retries", 0...Limits.maxCount, in: what()))
    }
    if !s.isNil(spec[.retry]) {
      if op.retry != nil { throw ScriptError("\(what()): give either 'retries' or 'retry', not both") }
      op.retry = try retryPolicy(s, spec[.retry], what: what())
    }
    if !s.isNil(spec[.conditions]) { try attachConditions(op, s, spec[.conditions], what: what()) }
    if !s.isNil(spec[.observers]) { try attachObservers(op, s, spec[.observers], what: what()) }
    if !s.isNil(spec[.after]) {
      try addDependencies(op, s, spec[.after], what: what(), field: "field 'after'")
    }
  }

  /// `priority = "high"` or Foundation's number (-8…8, snapped to the nearest level).
  func priority(_ s: LuaStack, _ i: Int32, what: String) throws -> Priority {
    if s.type(i) == LUA_TNUMBER, let number = s.number(i) {
      return Priority(number: try LuaNumber.finite(number, "\(what): field 'priority'"))
    }
    guard let name = s.string(i), let value = Priority(name: name) else {
      throw ScriptError(
        "\(what): field 'priority' must be one of " + Priority.allCases.map(\.name).joined(separator: ", ")
          + " or a number from -8 to 8 (got \(s.string(i).map { "'\($0)'" } ?? s.typeName(i)))")
    }
    return value
  }

  /// `qos = "user_interactive" | "user_initiated" | "utility" | "background"`.
  func qualityOfService(_ s: LuaStack, _ i: Int32, what: String) throws -> QualityOfService? {
    guard let name = try stringField(s, at: i, "qos", in: what) else { return nil }
    guard let qos = QualityOfService(rawValue: name) else {
      throw ScriptError(
        "\(what): field 'qos' must be one of " + QualityOfService.allCases.map(\.rawValue).joined(separator: ", ")
          + " (got '\(name)')")
    }
    return qos
  }

  /// `retry = { max = n, delay = seconds, backoff = "constant" | "exponential" }`
  func retryPolicy(_ s: LuaStack, _ i: Int32, what: String) throws -> RetryPolicy {
    guard s.type(i) == LUA_TTABLE else {
      throw ScriptError("\(what): field 'retry' must be a table { max =, delay =, backoff = } (got \(s.typeName(i)))")
    }
    let place = "\(what) retry"
    try checkFields(s, i, valid: ["max", "delay", "backoff"], in: place)
    let attempts = try count(try optionalNumber(s, i, "max", in: place), "max", 0...Limits.maxCount, in: place)
    let delay = try seconds(try optionalNumber(s, i, "delay", in: place) ?? 0, "delay", in: place)
    let name = try optionalString(s, i, "backoff", in: place) ?? "constant"
    guard let backoff = RetryPolicy.Backoff(rawValue: name) else {
      throw ScriptError("\(place): 'backoff' must be constant or exponential (got '\(name)')")
    }
    return RetryPolicy(max: attempts, delay: delay, backoff: backoff)
  }

  /// Adds the dependencies at `i`: a handle, a name, or a list of them.
  func addDependencies(
    _ op: OperationNode, _ s: LuaStack, _ i: Int32, what: @autoclosure () -> String,
    field: String
  ) throws {
    let i = s.absolute(i)
    guard s.type(i) == LUA_TTABLE else { return try addDependency(op, s, i, what: what(), field: field) }
    let count = s.rawLength(i)
    if count == 0 && !s.keys(i).isEmpty {
      throw ScriptError("\(what()): \(field) must be a list of operations or names (got a table with named keys)")
    }
    op.reserveDependencies(count)
    for k in 0..<count {  // one element on the stack at a time: lists may be long
      s.rawGet(i, k + 1)
      defer { s.pop() }
      try addDependency(op, s, s.top, what: what(), field: field)
    }
  }

  @inline(__always)
  private func addDependency(
    _ op: OperationNode, _ s: LuaStack, _ item: Int32, what: @autoclosure () -> String,
    field: String
  ) throws {
    do {
      if let dependency = operation(at: item, on: s) {
        try scheduler.addDependency(op, on: dependency)
      } else if let name = s.string(item) {
        try displayText(name, "\(what()): \(field)")  // no operation has such a name: say why
        try scheduler.addDependency(op, named: name, place: s.place())
        // A running body's operation joins the graph now; one the top level declares
        // (also after an earlier run) waits for the run that needs it to resolve its names.
        if current?.op != nil { try scheduler.resolveNames([op]) }
      } else {
        throw ScriptError("\(what()): \(field) must hold operations or names (got \(s.typeName(item)))")
      }
    } catch let error as EngineError {
      throw ScriptError(error.description)
    }
  }

  /// A progress pattern is checked where it is given: Lua would find a fault only when a line
  /// of output reached it, and then the operation could not fail for it.
  func checkProgressPattern(_ pattern: String, what: String) throws {
    let checked: LuaPattern
    do { checked = try LuaPattern(pattern) } catch {
      throw ScriptError("\(what): field 'progress': \(error) in \(DisplayText.quoted(pattern))")
    }
    guard (1...2).contains(checked.captures) else {
      throw ScriptError(
        "\(what): field 'progress' must capture a percentage, or completed and total: "
          + "one or two captures (got \(checked.captures) in \(DisplayText.quoted(pattern)))")
    }
  }

  /// `progress = "(%d+)/(%d+)"` on a command: each output line that matches sets the
  /// operation's progress (two captures: completed and total; one: a percentage).
  func watchProgress(of op: OperationNode, pattern: String) {
    op.outputObserver = { [unowned self, unowned op] text in
      let s = stack
      for line in text.split(separator: "\n") {
        s.pushRef(refs.stringMatch)
        s.push(String(line))
        s.push(pattern)
        guard tl_pcall(L, 2, 2, 0) == LUA_OK else {
          reportWarning("operation '\(op.name)': bad progress pattern: \(s.errorMessage(-1))")
          s.pop()
          op.outputObserver = nil
          return
        }
        let first = s.stringOrNumber(-2).flatMap { Double($0) }
        let second = s.stringOrNumber(-1).flatMap { Double($0) }
        s.pop(2)
        if let first, let second, second > 0 {
          op.progress.total = Int64(saturating: second)  // a 21-digit capture saturates
          op.progress.completed = Int64(saturating: min(first, second))
        } else if let first {
          op.progress.total = 100
          op.progress.completed = Int64(saturating: min(100, max(0, first)))
        }
      }
    }
  }

  /// Starts the coroutine of a Lua body; its end finishes the operation.
  func startBody(_ op: OperationNode, _ body: LuaFunctionBody) {
    let co = makeCoroutine(function: body.function, op: op, ending: .body(body))
    if let timeout = op.timeout { co.control.pointee.deadline = tl_monotonic() + timeout }
    if op.backgroundGrace != nil { co.control.pointee.shielded = 1 }  // the first Ctrl-C spares it
    body.coroutine = co
    pushHandle(.operation, id: op.id, on: LuaStack(L: co.thread))
    resume(co, arguments: 1)
  }

  /// The body of `co.op` ended `how`: the operation finishes.
  func bodyEnded(_ co: LuaCoroutine, _ body: LuaFunctionBody, _ how: CoroutineEnd) {
    let op = co.op!
    body.coroutine = nil
    let skipReason = tests.skipOnReturn.isEmpty ? nil : tests.skipOnReturn.removeValue(forKey: op)
    switch how {
    case .returned(let co, let count):
      let s = LuaStack(L: co.thread)
      if count > 0 {
        s.setTop(s.top - count + 1)
        lua_xmove(co.thread, L, 1)
        op.hostData = LuaReference(stack.ref())
      }
      s.setTop(0)
      if let reason = skipReason {
        scheduler.finish(op, .skipped, error: reason)
      } else {
        scheduler.finish(op, .succeeded)
      }
    case .failed(let failure):
      // Stopped by the interrupt flag: the scheduler hears of the signal now, before it
      // lets anything start because this operation ended.
      if failure.raisedByHook == 2 { scheduler.absorbSignals() }
      if failure.raisedByHook != 0 { tests.noteBlockStop(op, control: co.control.pointee) }
      if failure.raisedByHook == 3 {
        scheduler.expire(op)
        scheduler.finish(op, .cancelled)
      } else if op.isCancelled || failure.raisedByHook != 0 {
        if !op.isCancelled { scheduler.cancel(op, reason: failure.raisedByHook == 2 ? "interrupted" : "cancelled") }
        scheduler.finish(op, .cancelled)
      } else {
        scheduler.finish(op, .failed, error: failure.message, traceback: failure.traceback)
      }
    }
  }

  /// The body's return value, or `{status, stdout, stderr}` for a command.
  func pushResult(of op: OperationNode, on s: LuaStack) {
    if op.hostData == nil, let result = op.commandResult {
      pushCommandResult(result, on: stack)
      op.hostData = LuaReference(stack.ref())
    }
    if op.hostData == nil && op.reuse != nil { _ = restoreResult(of: op) }  // --resume: FreshnessAPI
    guard let reference = op.hostData as? LuaReference else { return s.pushNil() }
    stack.pushRef(reference.ref)
    if s.L != L { lua_xmove(L, s.L, 1) }
  }
}
