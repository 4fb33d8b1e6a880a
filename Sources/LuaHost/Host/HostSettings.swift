// HostSettings: small values the host keeps: confirm()'s and choose()'s answers, the heap's cap, Lua functions it calls.
import CLua
import TaskEngine

/// `confirm(prompt)`: answered yes at once (--yes), or asked with `ask` (nil: no terminal).
struct ConfirmAnswers {
  var assumeYes = false
  var ask: (@Sendable (String) -> Bool?)?
  /// `choose(question, choices)`: --answer, and how to ask (nil: no terminal).
  var choices = ChoiceAnswers()
}

/// Bytes the Lua heap may hold while Lua code runs (`--memory`, else the default of
/// `MemoryBudget`; 0: no limit), and whether it is that default.
struct HeapLimit {
  let bytes: Int
  let isDefault: Bool
  /// The state's heap account in the shim, which host objects are charged to (`HostMemory`).
  let account: UnsafeMutableRawPointer?
}

/// Lua values the host calls itself, as registry references: the REPL's formatter
/// (format.lua, compiled the first time it is needed: a run never shows results, and
/// compiling it was a fifth of the prelude's start-up) and `string.match` (for `progress =
/// pattern` on commands).
struct LibraryRefs {
  var formatter: Int32 = LUA_NOREF
  var stringMatch: Int32 = LUA_NOREF
}
