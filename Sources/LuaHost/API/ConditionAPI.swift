// The condition API: condition{...}, mutex, resource, exists, negate, silent, all, any.
import CLua
import CLuaShim
import TaskEngine

extension ScriptHost {
  /// What a condition value stands for: an engine condition, or a resource to hold.
  enum LuaCondition {
    case condition(any OperationCondition)
    case resource(String, Int)

    var name: String {
      switch self {
      case .condition(let c): c.name
      case .resource(let name, let n): n == 1 ? "mutex \(name)" : "resource \(name) (\(n))"
      }
    }
  }

  func installConditionKind() {
    pushMarkerMetatable("condition") { host, s in
      host.condition(at: 1, on: s).map { "<condition \($0.name)>" } ?? "condition"
    }
    pushFunction { host, s in  // c.name
      guard let condition = host.condition(at: 1, on: s), s.string(2) == "name" else {
        throw ScriptError("a condition has one field, 'name'")
      }
      s.push(condition.name)
      return 1
    }
    stack.rawSet(-2, "__index")
    refuseWrites("a condition")
    conditions.install(self)
  }

  /// A condition value: a box around the index of what it stands for.
  func pushCondition(_ condition: LuaCondition, on s: LuaStack) throws {
    var bytes = HostCharge.condition
    if case .resource(let name, _) = condition { bytes += name.utf8.count }
    try charge(bytes, on: s)
    conditions.push(condition, host: self, on: s)
  }

  func condition(at i: Int32, on s: LuaStack) -> LuaCondition? {
    conditions.value(at: i, host: self, on: s)
  }

  /// The engine condition at argument `i` (a resource cannot be negated or combined).
  func engineCondition(at i: Int32, on s: LuaStack, _ function: String) throws -> any OperationCondition {
    switch condition(at: i, on: s) {
    case .condition(let c)?: return c
    case .resource?:
      throw ScriptError("\(function): a mutex or resource cannot be combined; list it in conditions directly")
    case nil: throw s.badArgument(i, function, "condition")
    }
  }

  func conditionFunctions() -> [(String, HostFunction)] {
    [
      ("condition", { host, s in try host.createCondition(s) }),
      (
        "mutex",
        { host, s in
          guard let name = s.string(1), !name.isEmpty else { throw s.badArgument(1, "mutex", "non-empty string") }
          try host.displayArgument(name, 1, "mutex")
          try host.pushCondition(.resource(name, 1), on: s)
          return 1
        }
      ),
      (
        "resource",
        { host, s in
          guard let name = s.string(1), !name.isEmpty else { throw s.badArgument(1, "resource", "non-empty string") }
          try host.displayArgument(name, 1, "resource")
          guard let n = s.integer(2), n >= 1 else { throw host.badNumberArgument(s, 2, "resource", "positive integer") }
          try host.pushCondition(.resource(name, n), on: s)
          return 1
        }
      ),
      (
        "exists",
        { host, s in
          guard let path = s.string(1) else { throw s.badArgument(1, "exists", "string") }
          try host.pushCondition(.condition(BlockCondition.exists(path)), on: s)
          return 1
        }
      ),
      (
        "reachable",
        { host, s in
          guard let name = s.string(1), !name.isEmpty else { throw s.badArgument(1, "reachable", "host name") }
          guard let port = s.integer(2), (1...65535).contains(port) else {
            throw host.badNumberArgument(s, 2, "reachable", "port number")
          }
          let timeout = s.isNil(3) ? 5 : (s.number(3) ?? -1)
          guard timeout > 0, timeout <= 3600 else {
            throw host.badNumberArgument(s, 3, "reachable", "number of seconds from 0 to 3600")
          }
          try host.pushCondition(.condition(BlockCondition.reachable(host: name, port: port, timeout: timeout)), on: s)
          return 1
        }
      ),
      (
        "confirm",
        { host, s in
          guard let prompt = s.string(1), !prompt.isEmpty else { throw s.badArgument(1, "confirm", "prompt string") }
          try host.displayArgument(prompt, 1, "confirm")
          try host.pushCondition(
            .condition(BlockCondition.confirm(prompt, assumeYes: host.assumeYes, ask: host.ask)), on: s)
          return 1
        }
      ),
      (
        "choice",
        { host, s in
          try host.pushCondition(.condition(try host.choiceCondition(s)), on: s)
          return 1
        }
      ),
      (
        "negate",
        { host, s in
          try host.pushCondition(.condition(NegatedCondition(try host.engineCondition(at: 1, on: s, "negate"))), on: s)
          return 1
        }
      ),
      (
        "silent",
        { host, s in
          try host.pushCondition(.condition(SilentCondition(try host.engineCondition(at: 1, on: s, "silent"))), on: s)
          return 1
        }
      ),
      (
        "all",
        { host, s in
          let parts = try (1...max(1, s.top)).map { try host.engineCondition(at: $0, on: s, "all") }
          try host.pushCondition(.condition(CompoundCondition(.all, parts)), on: s)
          return 1
        }
      ),
      (
        "any",
        { host, s in
          let parts = try (1...max(1, s.top)).map { try host.engineCondition(at: $0, on: s, "any") }
          try host.pushCondition(.condition(CompoundCondition(.any, parts)), on: s)
          return 1
        }
      )
    ]
  }

  /// `condition { name =, evaluate = function(op) return ok, message end, dependency = function(op) … end }`
  func createCondition(_ s: LuaStack) throws -> Int32 {
    guard s.type(1) == LUA_TTABLE else { throw s.badArgument(1, "condition", "table") }
    let name = try displayText(
      try optionalString(s, 1, "name", in: "condition") ?? "condition", "condition: field 'name'")
    let what = "condition '\(name)'"
    try checkFields(s, 1, valid: ["name", "evaluate", "dependency"], in: what)
    func function(_ field: String) throws -> Int32? {
      if s.rawGet(1, field) == LUA_TNIL { s.pop(); return nil }
      guard s.type(-1) == LUA_TFUNCTION else {
        defer { s.pop() }
        throw ScriptError("\(what): field '\(field)' must be a function (got \(s.typeName(-1)))")
      }
      if s.L != L { lua_xmove(s.L, L, 1) }
      return stack.ref()
    }
    let evaluate = try function("evaluate")
    let dependency = try function("dependency")
    let condition = BlockCondition(
      name: name,
      dependency: dependency.map { ref in { [unowned self] op, _ in produceDependency(ref, for: op, condition: name) }
      },
      evaluate: { [unowned self] op, _, done in
        guard let evaluate else { return done(.satisfied) }
        evaluateCondition(evaluate, named: name, for: op, done: done)
      })
    try pushCondition(.condition(condition), on: s)
    return 1
  }

  /// Calls a condition's `dependency(op)`; it must return an operation (or nil: none).
  func produceDependency(_ ref: Int32, for op: OperationNode, condition: String) -> OperationNode? {
    let s = LuaStack(L: callState ?? L)
    _ = lua_checkstack(s.L, 4)
    let base = s.top
    pushRef(ref, on: s)
    pushHandle(.operation, id: op.id, on: s)
    defer { s.setTop(base) }
    guard protectedCall(s, arguments: 1, results: 1) == LUA_OK else {
      reportWarning("condition '\(condition)': dependency failed: \(s.errorMessage(-1))")
      return nil
    }
    return operation(at: -1, on: s)
  }

  /// Runs `evaluate(op)` as a coroutine (it may call sh, sleep, wait) and maps its answer:
  /// true → satisfied; false, msg → failed; nil, msg → skipped; an error → failed.
  /// A condition that returns a condition hands the decision on; one that leads back to
  /// itself (`return self`, or two returning each other) would never decide, so the chain of
  /// conditions handing on is kept per operation and a repeat fails the operation.
  func evaluateCondition(
    _ ref: Int32, named name: String, for op: OperationNode,
    done: @escaping (ConditionResult) -> Void
  ) {
    let chain = conditionChains.removeValue(forKey: op.id) ?? []
    if chain.contains(where: { $0.ref == ref }) {
      let names = (chain.drop { $0.ref != ref }.map(\.name) + [name]).map { "'\($0)'" }
      return done(
        .failed(
          "the conditions loop (\(names.joined(separator: " returns "))): "
            + "a condition's evaluate may return another condition, but not one that leads back to it"))
    }
    let co = makeCoroutine(function: ref, op: nil) { [unowned self] end in
      switch end {
      case .returned(let co, let count):
        let s = LuaStack(L: co.thread)
        let base = s.top - count + 1
        let message = count >= 2 ? s.stringOrNumber(base + 1) ?? "" : ""
        if count >= 1, case .condition(let inner)? = self.condition(at: base, on: s) {
          // evaluate returned a condition (`return ci or exists(".token")`): it decides.
          s.setTop(0)
          conditionChains[op.id] = chain + [(ref, name)]
          defer { conditionChains[op.id] = nil }
          return inner.evaluate(for: op, scheduler: self.scheduler) { result in
            if case .failed(let why) = result, !message.isEmpty { return done(.failed("\(message) (\(why))")) }
            done(result)
          }
        }
        if count >= 1 && s.boolean(base) {
          done(.satisfied)
        } else if count >= 1 && s.type(base) == LUA_TBOOLEAN {
          done(.failed(message.isEmpty ? "not satisfied" : message))
        } else {
          done(.skipped(message.isEmpty ? "not satisfied" : message))
        }
        s.setTop(0)
      case .failed(let failure):
        done(.failed(failure.message))
      }
    }
    resumeSoon(co) { [unowned self] in
      pushHandle(.operation, id: op.id, on: LuaStack(L: co.thread))
      return 1
    }
  }

  /// Attaches the condition at `i` to `op` (before its conditions are evaluated).
  func attachCondition(_ op: OperationNode, _ s: LuaStack, _ i: Int32, what: String) throws {
    guard let value = condition(at: i, on: s) else {
      throw ScriptError(
        "\(what): conditions are made by condition{}, mutex, resource, exists, negate, silent, all or any (got \(s.typeName(i)))"
      )
    }
    do {
      switch value {
      case .condition(let c): try scheduler.addCondition(c, to: op)
      case .resource(let name, let n): try scheduler.require(resource: name, capacity: n, for: op)
      }
    } catch let error as EngineError {
      throw ScriptError(error.description)
    }
  }

  /// `conditions = { c, ... }` in operation{}.
  func attachConditions(_ op: OperationNode, _ s: LuaStack, _ i: Int32, what: String) throws {
    try eachItem(
      s, i, isItem: { condition(at: $0, on: s) != nil },
      list: "\(what): field 'conditions' must be a list of conditions"
    ) {
      try attachCondition(op, s, $0, what: what)
    }
  }
}
