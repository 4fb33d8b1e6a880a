// OutputLimits: how much of a command's output the local runner keeps, in memory and on disk.

/// Bytes of one stream of one command kept in memory (`--output-limit`; past it the whole
/// stream goes to a file in the `SpillFolder` and memory keeps the last
/// `ProcessRunner.tailBytes`) and in its file (`--output-file-limit` or
/// TASKRUN_OUTPUT_FILE_LIMIT; past it the file keeps the beginning and the last `tailBytes`).
/// Configuration of a `ProcessRunner`, set before its commands start.
public struct OutputLimits: Sendable, Equatable {
  public var memory = 16 << 20
  public var file = 1 << 30
  public init() {}
  /// Bytes all spill files of a run may hold together: 4 × the file limit.
  public var total: Int { 4 * file }
}
