// taskrun graph: the declared graph as Graphviz dot, Mermaid or JSON, without running it.
import ArgumentParser
import FoundationEssentials
import LuaHost
import TaskEngine

/// The output formats of `taskrun graph`.
enum GraphFormat: String, ExpressibleByArgument, CaseIterable {
  case dot, mermaid, json
}

struct GraphCommand: ParsableCommand, InvokedCommand {
  static let configuration = CommandConfiguration(
    commandName: "graph",
    abstract: "Print the graph of the targets and their dependencies (no target: all) without running it.",
    usage:
      "taskrun graph [-C DIR] [-f FILE | SCRIPT] [TARGET...] [--format dot|mermaid|json] [--sandbox[=lua]] [--sandbox-allow KINDS]",
    discussion: "Without SCRIPT (or -f), taskrun.lua or workflow.lua here or in a parent folder, as for a run.")

  @Option(help: "dot (Graphviz), mermaid or json.")
  var format: GraphFormat = .dot

  @OptionGroup var place: ScriptPlace

  @OptionGroup var sandboxOptions: SandboxOptions

  @Argument(
    help: ArgumentHelp(
      "The workflow script, then operations to show with their dependencies.",
      valueName: "script-and-targets"))
  var words: [String] = []

  func run(_ invocation: Invocation, choice: CommandChoice) throws {
    var session: Session?
    let ops: [OperationNode]
    do {
      let (script, targets) = try ScriptFinder.resolve(file: place.file, directory: place.directory, words: words)
      let loaded = try load(script, invocation: invocation, choice: choice)
      session = loaded
      ops = loaded.scheduler.plan(for: try loaded.host.select(targets: targets))
    } catch let error as HostError {
      if session?.scheduler.halted == true { throw Taskrun.Exit(.interrupted) }
      TerminalText.writeMessage("taskrun: \(error.description)")
      throw Taskrun.Exit(.usage)
    }
    print(render(ops, scheduler: session!.scheduler), terminator: "")
    if let caveat = session!.host.dryRunCaveat { writeStandardError(caveat + "\n") }
    throw Taskrun.Exit(.success)
  }

  /// `script` loaded dry (the graph is drawn, nothing runs), what it prints on standard
  /// error, out of the picture. The found script was already loaded so by the check whether
  /// `graph` is one of its targets: that load is drawn, and what it printed is shown now;
  /// loading it again would run its top level twice.
  func load(_ script: String, invocation: Invocation, choice: CommandChoice) throws -> Session {
    // A load the subcommand check kept was not sandboxed: a sandboxed graph loads again.
    if !sandboxOptions.asked, let kept = choice.takeLoad(of: script) {
      kept.messages.replay()
      kept.session.scheduler.sinks = [MessagesToStandardError()]
      return kept.session
    }
    let session = Session(
      jobs: 1, keepGoing: false, display: .sinks([MessagesToStandardError()]),
      host: .init(arguments: invocation.scriptArguments))
    session.attachSignals()  // a script's top level may loop: Ctrl-C stops it
    try sandboxOptions.apply(to: session, script: script)
    do {
      try session.host.loadToRead(path: script)
    } catch let error as HostError {
      if session.scheduler.halted { throw Taskrun.Exit(.interrupted) }
      throw error
    }
    return session
  }

  func render(_ ops: [OperationNode], scheduler: Scheduler) -> String {
    let graph = GraphPicture(ops, scheduler: scheduler)
    switch format {
    case .dot: return graph.dot()
    case .mermaid: return graph.mermaid()
    case .json: return graph.json()
    }
  }
}
