// GraphPicture: `taskrun graph` as dot, Mermaid or JSON: operations, groups around their
// children, conditions with the operations they need first.
import TaskEngine

struct GraphPicture {
  let ops: [OperationNode]
  let shown: Set<OperationNode>
  /// Each operation's conditions, with the operation a condition needs first (the login
  /// before saving), made as the run would make it (the script runs dry: nothing executes).
  let conditions: [OperationNode: [(name: String, dependency: OperationNode?)]]
  let capacity: [String: Int]

  init(_ ops: [OperationNode], scheduler: Scheduler) {
    self.ops = ops
    shown = Set(ops)
    var conditions: [OperationNode: [(name: String, dependency: OperationNode?)]] = [:]
    for op in ops where !op.conditions.isEmpty {
      conditions[op] = op.conditions.map { ($0.name, $0.dependency(for: op, scheduler: scheduler)) }
    }
    self.conditions = conditions
    capacity = scheduler.resourceCapacity
  }

  /// Operations outside any group, then each group's children, group by group.
  private var topLevel: [OperationNode] { ops.filter { $0.group.map { !shown.contains($0) } ?? true } }
  private func children(_ group: OperationNode) -> [OperationNode] { group.children.filter(shown.contains) }

  private func edges(_ each: (OperationNode, OperationNode) -> Void) {
    for op in ops { for dependency in op.dependencies where shown.contains(dependency) { each(dependency, op) } }
  }

  /// An operation's box: its name, its body (control characters in a command escaped as
  /// `-n` shows them, `\27`: dot and Mermaid are read on a terminal too), its resources.
  private func label(_ op: OperationNode) -> String {
    var lines = [op.isGroup ? "group \(op.name)" : op.name]
    if !op.isGroup, let body = op.body { lines.append(TerminalText.escaped(body.summary, keepingLines: true)) }
    if let grant = op.body?.sandbox, !grant.isEmpty {
      lines.append(TerminalText.escaped("sandbox: " + grant.summary, keepingLines: false))
    }
    for name in op.resources {
      let units = capacity[name] ?? 1
      lines.append(units == 1 ? "mutex \(name)" : "resource \(name) (\(units))")
    }
    return lines.joined(separator: "\n")
  }

  // MARK: dot

  func dot() -> String {
    var out = "digraph taskrun {\n  rankdir=LR;\n  node [shape=box];\n"
    func node(_ op: OperationNode, _ indent: String) {
      out +=
        indent + quote(op.name) + " [label=\(quote(label(op)))"
        + (op.isGroup ? ", shape=folder" : "") + (op.queue.name == "main" ? "" : ", group=\(quote(op.queue.name))")
        + "];\n"
      guard op.isGroup else { return }
      out +=
        indent
        + "subgraph \(quote("cluster_" + op.name)) {\n\(indent)  label=\(quote(op.name));\n\(indent)  style=rounded;\n"
      for child in children(op) { node(child, indent + "  ") }
      out += indent + "}\n"
    }
    for op in topLevel { node(op, "  ") }
    edges { dependency, op in
      out +=
        "  \(quote(dependency.name)) -> \(quote(op.name))"
        + (op.policy == .succeeded ? "" : " [style=dashed, label=\(quote(op.policy.rawValue))]") + ";\n"
    }
    for op in ops {
      for (index, condition) in (conditions[op] ?? []).enumerated() {
        let id = quote("condition \(index + 1) of \(op.name)")
        out +=
          "  \(id) [shape=diamond, label=\(quote(condition.name))];\n  \(id) -> \(quote(op.name)) [style=dotted];\n"
        if let needed = condition.dependency {
          out += "  \(quote(needed.name)) [label=\(quote(label(needed)))];\n  \(quote(needed.name)) -> \(id);\n"
        }
      }
    }
    return out + "}\n"
  }

  private func quote(_ s: String) -> String {
    "\"" + s.replacing("\\", with: "\\\\").replacing("\"", with: "\\\"").replacing("\n", with: "\\n") + "\""
  }

  // MARK: Mermaid

  func mermaid() -> String {
    var out = "flowchart LR\n"
    func text(_ s: String) -> String { "\"" + mermaidText(s) + "\"" }
    func node(_ op: OperationNode, _ indent: String) {
      guard op.isGroup else { out += "\(indent)n\(op.id)[\(text(label(op)))]\n"; return }
      out += "\(indent)subgraph n\(op.id) [\(text(op.name))]\n"
      for child in children(op) { node(child, indent + "  ") }
      out += "\(indent)end\n"
    }
    for op in topLevel { node(op, "  ") }
    edges { dependency, op in
      out +=
        "  n\(dependency.id) " + (op.policy == .succeeded ? "-->" : "-. \(op.policy.rawValue) .->") + " n\(op.id)\n"
    }
    for op in ops {
      for (index, condition) in (conditions[op] ?? []).enumerated() {
        let id = "c\(op.id)_\(index + 1)"
        out += "  \(id){\(text(condition.name))} -.-> n\(op.id)\n"
        if let needed = condition.dependency { out += "  n\(needed.id)[\(text(label(needed)))] --> \(id)\n" }
      }
    }
    return out
  }

  /// Label text for Mermaid, which reads labels as HTML and turns `#name;` and `#123;` into
  /// entities: `#`, `&`, `<`, `>` and `"` are written as entities, a newline as `<br>`.
  func mermaidText(_ s: String) -> String {
    var out = ""
    for c in s {
      switch c {
      case "#": out += "#35;"
      case "&": out += "#amp;"
      case "<": out += "#lt;"
      case ">": out += "#gt;"
      case "\"": out += "#quot;"
      case "\n", "\r\n": out += "<br>"
      default: out.append(c)
      }
    }
    return out
  }

  // MARK: JSON

  /// An operation's widening, as the `op_start` event has it.
  static func json(_ grant: SandboxGrant) -> JSON {
    .object([
      ("network", .bool(grant.network)), ("read", .array(grant.read.map(JSON.string))),
      ("write", .array(grant.write.map(JSON.string)))
    ])
  }

  func json() -> String {
    var items = ops.map { op -> JSON in
      .object([
        ("name", .string(op.name)), ("queue", .string(op.queue.name)),
        ("priority", .string(op.priority.name)), ("when", .string(op.policy.rawValue)),
        ("weight", .number(op.weight)), ("body", op.isGroup ? .null : op.body.map { .string($0.summary) } ?? .null),
        ("after", .array(op.dependencies.filter(shown.contains).map { .string($0.name) })),
        ("group", op.group.map { .string($0.name) } ?? .null),
        ("is_group", .bool(op.isGroup)),
        ("resources", .array(op.resources.map(JSON.string))),
        ("sandbox", op.body?.sandbox.map(Self.json) ?? .null),
        (
          "conditions",
          .array(
            (conditions[op] ?? []).map { condition in
              .object([
                ("name", .string(condition.name)),
                ("dependency", condition.dependency.map { .string($0.name) } ?? .null)
              ])
            })
        )
      ])
    }
    for op in ops {
      for condition in conditions[op] ?? [] {
        guard let needed = condition.dependency else { continue }
        items.append(
          .object([
            ("name", .string(needed.name)), ("queue", .string(needed.queue.name)),
            ("priority", .string(needed.priority.name)),
            ("when", .string(needed.policy.rawValue)), ("weight", .number(needed.weight)),
            ("body", needed.body.map { .string($0.summary) } ?? .null), ("after", .array([])), ("group", .null),
            ("is_group", .bool(false)), ("resources", .array([])),
            ("sandbox", needed.body?.sandbox.map(Self.json) ?? .null), ("conditions", .array([])),
            ("needed_by_condition", .object([("condition", .string(condition.name)), ("of", .string(op.name))]))
          ]))
      }
    }
    return JSON.object([("operations", .array(items))]).text + "\n"
  }
}
