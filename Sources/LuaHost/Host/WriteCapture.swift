// WriteCapture: whether io.write and os.execute's output go through the reporters, and partial lines.
/// Writes to standard output and error while a live view draws (`capturing`) or while the
/// script is only read (`asMessages`) become messages; `pending` holds a written line still
/// waiting for its newline, per stream (0: output, 1: error).
struct WriteCapture {
  var capturing = false
  /// A load that only reads the script (`loadToRead`): writes become messages, as print's
  /// do, whatever the terminal; the sinks show or drop them.
  var asMessages = false
  var pending = ["", ""]
}
