// GlobalFunctions: the table of Swift functions the prelude makes globals (operation, queue, group, print, cancelled).
import CLua
import CLuaShim
import TaskEngine

extension ScriptHost {
  /// The global functions implemented in Swift (the yielding ones come from the prelude).
  func globalFunctions() -> [(String, HostFunction)] {
    [
      ("operation", { host, s in try host.createOperation(s) }),
      ("queue", { host, s in try host.charged(HostCharge.queue, s) { try host.createQueue(s) } }),
      ("group", { host, s in try host.charged(HostCharge.group, s) { try host.createGroup(s) } }),
      (
        "print",
        { host, s in
          // Like Lua's print, but through the reporters, so a live view keeps its place.
          // A __tostring that raises (or runs too long) raises from print, as in lua5.4.
          var parts: [String] = []
          for i in stride(from: 1, through: s.top, by: 1) {
            if let text = s.string(i) { parts.append(text); continue }
            guard tl_safe_tostring(s.L, i) == LUA_OK else { return TL_RAISE_PLAIN }
            parts.append(s.string(-1) ?? "?")
            s.pop()
          }
          host.scheduler.message(parts.joined(separator: "\t"), from: host.current?.op)
          return 0
        }
      ),
      (
        "cancelled",
        { host, s in
          s.push(host.current?.op?.isCancelled ?? (tl_interrupted() != 0))
          return 1
        }
      )
    ]
  }
}
