// TestRuntime: what `taskrun test` keeps while it runs: busted's runtime and each operation's tests.
import CLua
import CLuaShim
import TaskEngine

/// The state of test mode, by operation id: the test an operation runs, the errors outside
/// tests it met, the block (a file, a describe) whose body it runs and where an interrupt
/// stopped that body. The host only stores into it (TestSuite's host functions) and reads
/// what an operation reports.
final class TestRuntime {
  /// busted's runtime (the table files.lua returns), a registry reference.
  var runtime: Int32 = LUA_NOREF
  /// The test each operation runs.
  var cases: [Int: TestCase] = [:]
  /// Errors outside tests (a file that does not load, a describe body, a hook).
  var errors: [Int: [TestCase]] = [:]
  /// Blocks whose body runs in the operation, until the body has declared its tests.
  var blocks: [Int: TestCase] = [:]
  /// The line an interrupted block body had reached in its own file.
  var blockStops: [Int: Int] = [:]
  /// With --timeout a block's body runs as an operation of its own: that operation's id, to
  /// the block's.
  var blockBodies: [Int: Int] = [:]
  /// Bodies that end as skipped when they return (a pending test), with the reason. Read as
  /// each body ends (`bodyEnded`): no exclusivity check on that path.
  @exclusivity(unchecked) var skipOnReturn: [OperationNode: String] = [:]
  /// The -o output handler (Lua) that did not load, by name.
  var outputFailed: String?
  /// Why --log-success's file could not be written (the first failed write), if it could not.
  var logFailed: String?

  /// What an operation of the run reports: its test (a test Ctrl-C or a timeout ended
  /// without saying gets its status from the operation's outcome) and the errors outside
  /// tests it met (a file, a describe body, hooks).
  func results(for op: OperationNode) -> [TestCase] {
    var results: [TestCase] = []
    if var test = cases[op.id], test.counted {
      test.ran = op.hasStarted || op.errorKind != .interrupted
      if test.status == nil, let outcome = op.outcome {
        switch outcome {
        case .succeeded: test.status = .passed
        case .skipped: test.status = .pending
        case .failed, .cancelled:
          test.status = .error
          test.message = "\(test.file):\(test.line): " + (op.error ?? outcome.rawValue)
        }
      }
      results.append(test)
    }
    // A block (file, describe) an interrupt stopped before its body had declared its tests:
    // an error if the body was running, else a block not run.
    if var block = blocks[op.id], op.errorKind == .interrupted {
      block.ran = op.hasStarted
      block.status = .error
      block.line = blockStops[op.id] ?? block.line
      block.message =
        "\(block.file):\(block.line): interrupted while its body ran (the tests it had yet to declare did not run)"
      results.append(block)
    }
    return results + (errors[op.id] ?? [])
  }

  /// A block's body is being stopped (Ctrl-C) while suspended in `thread`: remembers the
  /// line of its own file it stands on, the innermost frame of that file, so the error points
  /// there and not at the block's declaration (a file's is line 0).
  func noteBlockStop(_ op: OperationNode, thread: OpaquePointer) {
    let id = blockBodies[op.id] ?? op.id
    guard let block = blocks[id] else { return }
    var frame = lua_Debug()
    var level: Int32 = 0
    while lua_getstack(thread, level, &frame) != 0 {
      level += 1
      guard lua_getinfo(thread, "Sl", &frame) != 0, frame.currentline > 0 else { continue }
      let source = withUnsafeBytes(of: frame.short_src) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
      if source == block.file {
        blockStops[id] = Int(frame.currentline)
        return
      }
    }
  }

  /// A block's body the hook stopped while it ran (a loop): the line the hook first raised
  /// at, if that was in the block's own file and nothing was noted when it was interrupted.
  func noteBlockStop(_ op: OperationNode, control: tl_control) {
    let id = blockBodies[op.id] ?? op.id
    guard let block = blocks[id], blockStops[id] == nil, control.stop_line > 0 else { return }
    let source = withUnsafeBytes(of: control.stop_src) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
    if source == block.file { blockStops[id] = Int(control.stop_line) }
  }
}
