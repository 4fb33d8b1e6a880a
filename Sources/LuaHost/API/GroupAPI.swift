// The group API: group{...} and its children (a group's handle is an operation's: OperationNoun).
import CLua
import CLuaShim
import TaskEngine

extension ScriptHost {
  /// `group { name = "import", a, b, c, after = …, conditions = … }`
  func createGroup(_ s: LuaStack) throws -> Int32 {
    guard s.type(1) == LUA_TTABLE else { throw s.badArgument(1, "group", "table") }
    let spec = try readSpec(s, 1, groupKeys, list: true, in: subject("group", s, 1))
    let name = try stringField(s, at: spec[.name], "name", in: "group")
    if let name { try displayText(name, "group: field 'name'") }
    func what() -> String { name.map { "group '\($0)'" } ?? "group" }
    var queue: WorkQueue?
    if !s.isNil(spec[.queue]) {
      queue = self.queue(at: spec[.queue], on: s)
      if queue == nil {
        throw ScriptError("\(what()): field 'queue' must be a queue (got \(s.typeName(spec[.queue])))")
      }
    }
    let group: OperationNode
    do { group = try scheduler.makeGroup(name: name, queue: queue) } catch let error as EngineError {
      throw ScriptError(error.description)
    }
    do {
      try configure(group, from: s, spec, what: what())
      for k in 0..<s.rawLength(1) {
        s.rawGet(1, k + 1)
        defer { s.pop() }
        try addToGroup(group, s, s.top, what: what())
      }
    } catch {
      scheduler.discard(group)
      throw error
    }
    if let producer = current?.op {
      if let enclosing = producer.group { try? scheduler.add(group, to: enclosing) }
      if group.group == nil { scheduler.schedule([group]) }
      scheduler.produced(group, by: producer)
    }
    pushHandle(.operation, id: group.id, on: s)
    return 1
  }

  func addToGroup(_ group: OperationNode, _ s: LuaStack, _ i: Int32, what: String) throws {
    guard let child = operation(at: i, on: s) else {
      throw ScriptError("\(what): children must be operations (got \(s.typeName(i)))")
    }
    do { try scheduler.add(child, to: group) } catch let error as EngineError {
      throw ScriptError(error.description)
    }
  }
}
