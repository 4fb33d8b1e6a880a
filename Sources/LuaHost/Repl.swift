// The REPL's evaluation rules, as lua.c has them: an expression shows its values; input
// that ends too early (`<eof>`) continues on the next line.
import CLua
import CLuaShim
import Foundation
import TaskEngine

extension ScriptHost {
  /// What became of a line (or the lines gathered so far).
  public enum LineResult: Equatable {
    /// It ran; what it returned as the REPL shows it (nil: nothing).
    case ran(String?)
    /// The statement is not finished: read another line and try again with both.
    case incomplete
  }

  /// Evaluates REPL input: first as `return <input>` (so `1 + 41` shows 42), then as a
  /// statement. Operations it declares are not run until `run()`. Errors are thrown.
  public func evaluate(line source: String) throws -> LineResult {
    let text = source.hasPrefix("=") ? String(source.dropFirst()) : source  // Lua 5.1's `=expr`
    if compiles("return " + text + ";") {
      return .ran(try execute(chunk: Data(("return " + text + ";").utf8), name: "=stdin", format: true))
    }
    if let error = compileError(text) {
      if error.hasSuffix("<eof>") { return .incomplete }
      throw HostError(error)
    }
    return .ran(try execute(chunk: Data(text.utf8), name: "=stdin", format: true))
  }

  func compiles(_ text: String) -> Bool { compileError(text) == nil }

  /// The syntax error of `text`, or nil if it compiles.
  func compileError(_ text: String) -> String? {
    let status = tl_load(L, text, text.utf8.count, "=stdin", "t")
    defer { stack.pop() }
    return status == LUA_OK ? nil : stack.describe(-1)
  }

  /// Runs everything declared and not yet run (what `run()` does), and waits.
  public func runPending() -> RunSummary {
    run(scheduler.operations.filter { !$0.isScheduled })
  }

  /// After an interrupted evaluation the REPL goes on: the interrupt is over.
  public func endInterrupt() {
    setInterrupt(false)
    scheduler.inbox.discardSignals()  // a Ctrl-C at the prompt is not for the next evaluation
    scheduler.endInterrupt()
  }
}
