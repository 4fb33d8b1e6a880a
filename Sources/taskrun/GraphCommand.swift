// taskrun graph: the declared graph as Graphviz dot, Mermaid or JSON, without running it.
import ArgumentParser
import Foundation
import LuaHost
import TaskEngine

/// The output formats of `taskrun graph`.
enum GraphFormat: String, ExpressibleByArgument, CaseIterable {
  case dot, mermaid, json
}

struct GraphCommand: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "taskrun graph",
    abstract: "Print the graph of the targets and their dependencies (no target: all) without running it.",
    usage: "taskrun graph SCRIPT [TARGET...] [--format dot|mermaid|json]")

  @Option(help: "dot (Graphviz), mermaid or json.")
  var format: GraphFormat = .dot

  @Argument(help: "The workflow script.")
  var script: String

  @Argument(help: "Operations to show, with their dependencies.")
  var targets: [String] = []

  func run() throws {
    let scheduler = Scheduler(jobs: 1)
    Taskrun.attachSignals(scheduler)  // a script's top level may loop: Ctrl-C stops it
    let host = ScriptHost(scheduler: scheduler, arguments: RunCommand.scriptArguments)
    host.dryRun = true  // the graph is drawn, nothing runs
    let ops: [OperationNode]
    do {
      try host.load(path: script)
      ops = scheduler.plan(for: try host.select(targets: targets))
    } catch let error as HostError {
      if scheduler.halted { throw Taskrun.Exit(.interrupted) }
      FileHandle.standardError.write(Data("taskrun: \(error.description)\n".utf8))
      throw Taskrun.Exit(.usage)
    }
    print(render(ops), terminator: "")
    throw Taskrun.Exit(.success)
  }

  func render(_ ops: [OperationNode]) -> String {
    let shown = Set(ops)
    switch format {
    case .dot:
      var out = "digraph taskrun {\n  rankdir=LR;\n  node [shape=box];\n"
      for op in ops {
        let label = [op.name, op.body?.summary].compactMap { $0 }.joined(separator: "\n")
        out += "  \(dotQuote(op.name)) [label=\(dotQuote(label))\(op.queue.name == "main" ? "" : ", group=\(dotQuote(op.queue.name))")];\n"
      }
      for op in ops {
        for dependency in op.dependencies where shown.contains(dependency) {
          out += "  \(dotQuote(dependency.name)) -> \(dotQuote(op.name))"
            + (op.policy == .succeeded ? "" : " [style=dashed, label=\(dotQuote(op.policy.rawValue))]") + ";\n"
        }
      }
      return out + "}\n"
    case .mermaid:
      var out = "flowchart LR\n"
      for op in ops { out += "  n\(op.id)[\"\(op.name.replacingOccurrences(of: "\"", with: "#quot;"))\"]\n" }
      for op in ops {
        for dependency in op.dependencies where shown.contains(dependency) {
          out += "  n\(dependency.id) " + (op.policy == .succeeded ? "-->" : "-. \(op.policy.rawValue) .->") + " n\(op.id)\n"
        }
      }
      return out
    case .json:
      let items = ops.map { op -> JSON in
        .object([
          ("name", .string(op.name)), ("queue", .string(op.queue.name)),
          ("priority", .string(op.priority.name)), ("when", .string(op.policy.rawValue)),
          ("weight", .number(op.weight)), ("body", op.body.map { .string($0.summary) } ?? .null),
          ("after", .array(op.dependencies.filter(shown.contains).map { .string($0.name) })),
        ])
      }
      return JSON.object([("operations", .array(items))]).text + "\n"
    }
  }

  func dotQuote(_ s: String) -> String {
    "\"" + s.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"")
      .replacingOccurrences(of: "\n", with: "\\n") + "\""
  }
}
