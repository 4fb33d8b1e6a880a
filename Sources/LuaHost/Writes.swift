// Writes: io.write and io.stdout:write through the reporters while a live view draws below.
import CLua
import CLuaShim
import TaskEngine

extension ScriptHost {
  /// `__write(text)`, the prelude's hook under io.write: when writes are captured (a live
  /// view would draw over them), whole lines become messages, as `print`'s do, and the rest
  /// waits for its newline; returns whether it took the text (else Lua writes it itself).
  func writeFunctions() -> [(String, HostFunction)] {
    [("__write", { host, s in
      guard host.captureWrites, let text = s.string(1) else {
        s.push(false)
        return 1
      }
      host.pendingWrite += text
      while let newline = host.pendingWrite.firstIndex(of: "\n") {
        host.scheduler.message(String(host.pendingWrite[..<newline]), from: host.current?.op)
        host.pendingWrite.removeSubrange(...newline)
      }
      s.push(true)
      return 1
    })]
  }

  /// Prints a written line that never got its newline (at the end of a run).
  func flushWrites() {
    guard !pendingWrite.isEmpty else { return }
    scheduler.message(pendingWrite, from: nil)
    pendingWrite = ""
  }
}
