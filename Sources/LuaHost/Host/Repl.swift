// The REPL's evaluation rules, as lua.c has them: an expression shows its values; input
// that ends too early (`<eof>`) continues on the next line.
import CLua
import CLuaShim
import FoundationEssentials
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
      // Not `return f(x)`: that tail call drops the line's frame, so an error raised where
      // `f` was called (`sleep(30)` interrupted) had no `stdin:1:` to point at.
      let chunk = "local function __taskrun_values(...) return ... end return __taskrun_values(" + text + "\n)"
      return .ran(try execute(chunk: Data(chunk.utf8), name: "=stdin", format: true))
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

  /// After an evaluation that Ctrl-C stopped: what the halt cancelled ends (its commands
  /// reaped and its lines printed) before the next prompt, not during the next evaluation.
  public func settleInterrupted() {
    guard scheduler.halted else { return }
    scheduler.run(until: { self.scheduler.unfinishedScheduled == 0 }, onStall: { self.failStalledWaits() })
  }

  /// After an interrupted evaluation the REPL goes on: the interrupt is over.
  public func endInterrupt() {
    setInterrupt(false)
    scheduler.inbox.discardSignals()  // a Ctrl-C at the prompt is not for the next evaluation
    scheduler.endInterrupt()
  }
}

extension ScriptHost {
  /// Tab completion: globals, or after `expr.` / `expr:` the fields and methods of the
  /// value of `expr` (an operation, queue, progress node or table).
  public func completions(for text: String) -> [String] {
    let s = stack
    let top = s.top
    defer { s.setTop(top) }
    guard let separator = text.lastIndex(where: { $0 == "." || $0 == ":" }) else {
      lua_rawgeti(L, tl_registryindex(), lua_Integer(LUA_RIDX_GLOBALS))
      return names(in: -1).filter { $0.hasPrefix(text) }.sorted()
    }
    let base = String(text[..<separator])
    let partial = String(text[text.index(after: separator)...])
    let isMethod = text[separator] == ":"
    let source = "return " + base
    guard !base.isEmpty, tl_load(L, source, source.utf8.count, "=completion", "t") == LUA_OK,
      tl_bounded_call(L, 0, 1, "the expression being completed") == LUA_OK
    else { return [] }  // user code: bounded, as every call the host makes
    var candidates: [String] = []
    if let kind = HandleKind.allCases.first(where: { handleID($0, at: -1, on: s) != nil }) {
      let noun = self.noun(kind)
      candidates = (isMethod ? [] : noun.readable) + noun.methodNames
    } else if s.type(-1) == LUA_TTABLE {
      candidates = names(in: -1)
    }
    return Array(Set(candidates)).filter { $0.hasPrefix(partial) }.sorted().map { base + String(text[separator]) + $0 }
  }

  /// The string keys of the table at `i`.
  private func names(in i: Int32) -> [String] {
    stack.keys(i).compactMap { if case .name(let name) = $0 { name } else { nil } }
  }
}
