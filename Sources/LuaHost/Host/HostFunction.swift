// Host functions: Swift closures Lua can call; they return a status, C raises afterwards.
import CLua
import CLuaShim
import TaskEngine

/// An error a host function reports to the calling Lua code. `positioned` messages get the
/// caller's "file:line: " prefix when raised.
struct ScriptError: Error, CustomStringConvertible {
  let description: String
  var positioned = true
  init(_ message: String, positioned: Bool = true) {
    self.description = message
    self.positioned = positioned
  }

  /// Whatever a host function or a request threw, as Lua is to raise it. A graph mistake
  /// with a place (a name in `after` resolved only now) is raised where the script gave it.
  init(raising error: any Error) {
    switch error {
    case let error as ScriptError: self = error
    case let error as EngineError:
      self =
        error.place.map { ScriptError("\($0) \(error.description)", positioned: false) }
        ?? ScriptError(error.description)
    default: self.init("\(error)")
    }
  }
}

/// A Swift function callable from Lua: it reads its arguments from the stack, pushes its
/// results and returns how many, or throws a ScriptError that C raises once Swift returned.
typealias HostFunction = (ScriptHost, LuaStack) throws -> Int32

/// The single entry point from C. The host is found through the state's extra space, so each
/// Lua state (and thread) reaches its own host without any global.
let hostDispatch: @convention(c) (OpaquePointer?, Int32) -> Int32 = { L, index in
  guard let L, let raw = tl_extraspace(L).pointee else { return 0 }
  let host = Unmanaged<ScriptHost>.fromOpaque(raw).takeUnretainedValue()
  let stack = LuaStack(L: L)
  let outer = host.callState
  host.callState = L
  defer { host.callState = outer }
  if let message = host.syncProgress() {
    stack.push(message)
    return TL_RAISE
  }
  do {
    return try host.functions[Int(index)](host, stack)
  } catch is HostMemoryRefused {
    return TL_RAISE_MEMORY
  } catch {
    let error = ScriptError(raising: error)
    stack.push(error.description)
    return error.positioned ? TL_RAISE : TL_RAISE_PLAIN
  }
}
