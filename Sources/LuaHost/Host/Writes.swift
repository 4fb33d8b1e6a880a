// Writes: io.write, io.stdout:write and io.stderr:write through the reporters while a live view draws below, or while the script is only read.
import CLua
import CLuaShim
import Glibc
import TaskEngine

extension ScriptHost {
  /// `__write(text, fd)`, the prelude's hook under io.write and file:write on standard output
  /// (fd 1) and standard error (fd 2): when writes are captured (a live view would draw over
  /// them), whole lines become messages, as `print`'s do, and the rest waits for its newline;
  /// returns whether it took the text (else Lua writes it itself). Standard error is taken only
  /// while it is a terminal: redirected, it is not where the view draws. A load that only reads
  /// the script (`writesAreMessages`) takes both: its standard output is a listing or a picture.
  func writeFunctions() -> [(String, HostFunction)] {
    [
      (
        "__write",
        { host, s in
          let fd = s.integer(2) == 2 ? 2 : 1
          let taken = host.writesAreMessages || host.captureWrites && (fd == 1 || isatty(STDERR_FILENO) != 0)
          guard taken, let text = s.string(1) else {
            s.push(false)
            return 1
          }
          host.capturedWrite(text, stream: fd - 1)
          s.push(true)
          return 1
        }
      )
    ]
  }

  /// Text written to standard output (`stream` 0) or error (1) while writes are captured:
  /// each whole line is a message above the view; a partial line waits for its newline.
  func capturedWrite(_ text: String, stream: Int) {
    writes.pending[stream] += text
    while let newline = writes.pending[stream].firstIndex(of: "\n") {
      scheduler.message(String(writes.pending[stream][..<newline]), from: current?.op)
      writes.pending[stream].removeSubrange(...newline)
    }
  }

  /// Prints written lines that never got their newline (at the end of a run).
  func flushWrites() {
    for stream in writes.pending.indices where !writes.pending[stream].isEmpty {
      scheduler.message(writes.pending[stream], from: nil)
      writes.pending[stream] = ""
    }
  }
}
