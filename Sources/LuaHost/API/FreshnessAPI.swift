// The freshness API: inputs, outputs, depfile, key and fresh on operation{}, a Lua body's code identity, and results kept for --resume.
import CLua
import CLuaShim
import TaskEngine

extension ScriptHost {
  /// Bytes of text a result may take to be kept for `--resume` (the store keeps it for every
  /// kept run).
  static let keptResultBytes = 64 << 10

  /// Most paths one field may list.
  static let maxDeclaredPaths = 10_000

  /// `inputs =`, `outputs =` (a path or glob, or a list of them), `depfile =` (a path),
  /// `key =` (any value made of nil, booleans, numbers, strings and tables), `fresh =` (a function).
  func attachFreshness(_ op: OperationNode, _ s: LuaStack, _ spec: SpecSlots, what: @autoclosure () -> String) throws {
    guard !op.isGroup else { throw ScriptError("\(what()): a group has no inputs or outputs of its own") }
    let freshness = Freshness()
    freshness.inputs = try paths(s, spec[.inputs], field: "inputs", what: what)
    freshness.outputs = try paths(s, spec[.outputs], field: "outputs", what: what)
    if !s.isNil(spec[.depfile]) {
      guard let depfile = s.type(spec[.depfile]) == LUA_TSTRING ? s.string(spec[.depfile]) : nil else {
        throw ScriptError("\(what()): field 'depfile' must be a path (got \(s.typeName(spec[.depfile])))")
      }
      try checkPath(depfile, field: "depfile", what: what())
      freshness.depfile = depfile
    }
    if !s.isNil(spec[.key]) {
      do {
        freshness.key = try StableText.of(s.L, spec[.key], name: "key", limit: 1 << 16, normalizing: true)
      } catch {
        throw ScriptError(
          "\(what()): field 'key' must be made of nil, booleans, numbers, strings and tables, to be compared between runs: \(error.description)"
        )
      }
    }
    if !s.isNil(spec[.fresh]) {
      guard s.type(spec[.fresh]) == LUA_TFUNCTION else {
        throw ScriptError("\(what()): field 'fresh' must be a function (got \(s.typeName(spec[.fresh])))")
      }
      s.pushValue(spec[.fresh])
      let ref = s.ref()
      freshness.check = { [unowned self] op in freshCheck(ref, op) }
    }
    op.freshness = freshness
  }

  /// A path or glob, or a list of them: each a non-empty string without a NUL byte.
  private func paths(_ s: LuaStack, _ i: Int32, field: String, what: () -> String) throws -> [String] {
    if s.isNil(i) { return [] }
    if s.type(i) == LUA_TSTRING, let path = s.string(i) {  // one path: most operations
      try checkPath(path, field: field, what: what())
      return [path]
    }
    var found: [String] = []
    try eachItem(
      s, i, isItem: { s.type($0) == LUA_TSTRING },
      list: "\(what()): field '\(field)' must be a path or a list of paths"
    ) { item in
      guard s.type(item) == LUA_TSTRING, let path = s.string(item) else {
        throw ScriptError("\(what()): field '\(field)' must hold paths (got \(s.typeName(item)))")
      }
      try checkPath(path, field: field, what: what())
      found.append(path)
      if found.count > Self.maxDeclaredPaths {
        throw ScriptError("\(what()): field '\(field)' lists more than \(Self.maxDeclaredPaths) paths (use a glob)")
      }
    }
    return found
  }

  private func checkPath(_ path: String, field: String, what: @autoclosure () -> String) throws {
    let bytes = path.utf8
    guard !bytes.isEmpty, bytes.count <= 4096, !bytes.contains(0) else {
      if bytes.isEmpty { throw ScriptError("\(what()): field '\(field)': a path must not be empty") }
      if bytes.count > 4096 { throw ScriptError("\(what()): field '\(field)': a path is longer than 4096 bytes") }
      throw ScriptError("\(what()): field '\(field)': a path must not hold a NUL byte")
    }
  }

  /// Calls `fresh(op)`: nil when it returned true (up to date), else why the operation runs.
  private func freshCheck(_ ref: Int32, _ op: OperationNode) -> String? {
    let s = LuaStack(L: callState ?? L)
    _ = lua_checkstack(s.L, 3)
    pushRef(ref, on: s)
    pushHandle(.operation, id: op.id, on: s)
    let what = "fresh() of operation '\(op.name)'"
    guard boundedCall(s, arguments: 1, results: 1, what: what) == LUA_OK else {
      let message = s.errorMessage(-1)
      s.pop()
      reportWarning("\(what) failed: \(message); it runs")
      return "fresh() failed: \(message)"
    }
    defer { s.pop() }
    return s.type(-1) == LUA_TBOOLEAN && s.boolean(-1) ? nil : "fresh() returned \(s.describe(-1))"
  }

  /// A Lua function's identity: a hash of its byte code without debug information (moving it
  /// to other lines changes nothing), and of its upvalues that are plain values.
  func codeIdentity(_ function: Int32) -> String {
    let s = stack
    s.pushRef(function)
    defer { s.pop() }
    final class Sink { var bytes: [UInt8] = [] }
    let sink = Sink()
    let writer: lua_Writer = { _, data, size, context in
      let sink = Unmanaged<Sink>.fromOpaque(context!).takeUnretainedValue()
      if let data, size > 0 { sink.bytes.append(contentsOf: UnsafeRawBufferPointer(start: data, count: size)) }
      return 0
    }
    _ = lua_dump(s.L, writer, Unmanaged.passUnretained(sink).toOpaque(), 1)
    var n: Int32 = 1
    while let name = lua_getupvalue(s.L, -1, n) {
      defer { s.pop() }
      n += 1
      let label = String(cString: name)
      if label == "_ENV" { continue }
      sink.bytes.append(contentsOf: label.utf8)
      if let text = try? StableText.of(s.L, -1, name: label, limit: 1 << 16) {
        sink.bytes.append(contentsOf: text.utf8)
      } else {
        sink.bytes.append(contentsOf: s.typeName(-1).utf8)
      }
    }
    return Digest.of(sink.bytes).hex
  }

  /// An operation's result as text `--resume` can restore: a Lua body's return value made of
  /// plain values, or a command's `{ status, stdout, stderr }` (nil: it cannot be kept).
  func keptResult(_ op: OperationNode) -> String? {
    let s = stack
    if op.hostData == nil {
      // A command's, from Swift: no Lua table is made for a result nobody read.
      guard let result = op.commandResult, result.stdoutFile == nil, result.stderrFile == nil,
        result.stdoutBytes.count + result.stderrBytes.count <= Self.keptResultBytes,
        result.status != 0 || !result.stdoutBytes.isEmpty || !result.stderrBytes.isEmpty  // else nothing to keep
      else { return nil }
      return "{[\"status\"]=\(result.status),[\"stderr\"]=\(StableText.quoted(result.stderrBytes)),"
        + "[\"stdout\"]=\(StableText.quoted(result.stdoutBytes))}"
    }
    pushResult(of: op, on: s)
    defer { s.pop() }
    return try? StableText.of(s.L, -1, name: "result", limit: Self.keptResultBytes)
  }

  /// Pushes the result `--resume` kept for `op` (nil if none could be kept), made once.
  func restoreResult(of op: OperationNode) -> Bool {
    guard op.hostData == nil else { return false }
    // A command that succeeded in silence kept no text: its result is known.
    let silent = #"{["status"]=0,["stderr"]="",["stdout"]=""}"#
    guard let text = scheduler.memory?.restoredResult(op) ?? (op.body is CommandBody ? silent : nil) else {
      return false
    }
    let s = stack
    let chunk = "return " + text
    guard
      chunk.withCString({ tl_load(s.L, $0, chunk.utf8.count, "=resumed result", "t") }) == LUA_OK
    else {
      s.pop()
      return false
    }
    // No globals: the text is only a literal.
    s.newTable()
    _ = lua_setupvalue(s.L, -2, 1)
    guard boundedCall(s, arguments: 0, results: 1, what: "the resumed result of '\(op.name)'") == LUA_OK else {
      s.pop()
      return false
    }
    op.hostData = LuaReference(s.ref())
    return true
  }
}

extension ScriptHost {
  /// Gives the run the store's memory; results are kept for `--resume` through this host.
  public func remember(_ memory: RunMemory) {
    memory.resultText = { [unowned self] op in keptResult(op) }
    scheduler.memory = memory
  }
}
