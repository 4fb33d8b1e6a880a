// Scheduler+OutputText: whether a command's output has to be decoded into text as it comes.

extension Scheduler {
  /// Whether the output of the command `token` must reach the loop as text: a sink reads
  /// `output` events, its operation has an output observer (`progress =` patterns), or an
  /// executor filters its text (srun's own lines). Otherwise whole lines go to the
  /// operation's tail as bytes, which binary output (gzip, tar) pays for no more than `cat`.
  func outputTextWanted(_ token: CommandToken) -> Bool {
    if interests.contains(.output) { return true }
    guard let op = commands.localOwner(of: token) else { return true }
    return op.outputObserver != nil
  }
}
