// RecordedSummary: a run's summary (counts, failures with their output's tail, slowest, critical path) as the run store keeps it.

/// What a run's end printed, kept so that `taskrun runs show` prints it again and `taskrun
/// report` draws its critical path. Bounded: a run of a million operations keeps the first and
/// last 1,000 steps of its critical path (and how many more there were), its first 1,000
/// failures, and of each the last 4 KB of its output.
public struct RecordedSummary: Sendable {
  public var summary: RunSummary
  /// The critical path's steps left out between its first and last `keptSteps / 2`: how many,
  /// and their seconds.
  public var omittedSteps = 0
  public var omittedSeconds = 0.0
  /// Failures left out after the first `keptFailures`.
  public var omittedFailures = 0

  static let keptSteps = 2000
  static let keptFailures = 1000
  static let keptError = 4000
  static let keptOutput = 4096
  static let format = 1

  init(summary: RunSummary) { self.summary = summary }

  /// The bytes the store keeps of `summary`.
  static func encoded(_ summary: RunSummary) -> [UInt8] {
    var w = ByteWriter()
    w.count(format)
    w.double(summary.elapsed)
    w.bytes.append(summary.interrupted ? 1 : 0)
    w.optionalString(summary.ended)
    for n in [
      summary.succeeded, summary.failed, summary.cancelled, summary.skipped, summary.upToDate, summary.resumed
    ] {
      w.count(max(0, n))
    }
    w.count(summary.slowest.count)
    for step in summary.slowest { timing(step, &w) }
    var path = summary.criticalPath
    var omitted: ArraySlice<RunSummary.Timing> = []
    if path.count > keptSteps {
      omitted = path[(keptSteps / 2)..<(path.count - keptSteps / 2)]
      path = Array(path.prefix(keptSteps / 2) + path.suffix(keptSteps / 2))
    }
    w.count(omitted.count)
    w.double(omitted.reduce(0) { $0 + $1.duration })
    w.count(path.count)
    for step in path { timing(step, &w) }
    w.count(max(0, summary.failures.count - keptFailures))
    let failures = summary.failures.prefix(keptFailures)
    w.count(failures.count)
    for failure in failures {
      w.string(failure.name)
      w.string(failure.outcome.rawValue)
      w.string(tail(failure.error, keptError))
      w.string(tail(failure.output, keptOutput))
      w.optionalString(failure.kind?.rawValue)
      w.optionalString(failure.cause)
    }
    return w.bytes
  }

  private static func timing(_ t: RunSummary.Timing, _ w: inout ByteWriter) {
    w.string(t.name)
    w.double(t.duration)
    w.optionalString(t.reason?.after)
    w.optionalString(t.reason?.kind)
    w.optionalString(t.reason?.detail)
  }

  /// The last `bytes` bytes of `text`, from a line's start where one is near (a character cut
  /// in two reads as U+FFFD).
  static func tail(_ text: String, _ bytes: Int) -> String {
    let utf8 = Array(text.utf8)
    guard utf8.count > bytes else { return text }
    var cut = utf8.suffix(bytes)
    if let newline = cut.firstIndex(of: 10), newline - cut.startIndex < 512 { cut = cut[(newline + 1)...] }
    return String(decoding: cut, as: UTF8.self)
  }

  /// Nil for bytes that are not a summary (a damaged or doctored row).
  init?(bytes: [UInt8]) {
    var r = ByteReader(bytes)
    guard r.count() == Self.format, let elapsed = r.double(), let interrupted = r.flagByte(),
      let ended = r.optionalString()
    else { return nil }
    var s = RunSummary()
    (s.elapsed, s.interrupted, s.ended) = (Self.sane(elapsed), interrupted, ended)
    var counts: [Int] = []
    for _ in 0..<6 {
      guard let n = r.varint(), n < 1 << 40 else { return nil }
      counts.append(Int(n))
    }
    (s.succeeded, s.failed, s.cancelled, s.skipped, s.upToDate, s.resumed) =
      (counts[0], counts[1], counts[2], counts[3], counts[4], counts[5])
    guard let slowest = Self.timings(&r) else { return nil }
    s.slowest = slowest
    guard let omitted = r.count(), let hiddenSeconds = r.double(), let path = Self.timings(&r) else { return nil }
    s.criticalPath = path
    guard let hiddenFailures = r.count(), let n = r.count() else { return nil }
    for _ in 0..<n {
      guard let name = r.string(), let outcome = r.string(), let error = r.string(), let output = r.string(),
        let kind = r.optionalString(), let cause = r.optionalString()
      else { return nil }
      var failure = RunSummary.Failure(
        name: name, outcome: Outcome(rawValue: outcome) ?? .failed, error: error, output: output)
      (failure.kind, failure.cause) = (kind.flatMap(FailureKind.init(rawValue:)), cause)
      s.failures.append(failure)
    }
    self.summary = s
    (omittedSteps, omittedSeconds, omittedFailures) = (omitted, Self.sane(hiddenSeconds), hiddenFailures)
  }

  private static func timings(_ r: inout ByteReader) -> [RunSummary.Timing]? {
    guard let n = r.count() else { return nil }
    var found: [RunSummary.Timing] = []
    for _ in 0..<n {
      guard let name = r.string(), let duration = r.double(), let after = r.optionalString(),
        let kind = r.optionalString(), let detail = r.optionalString()
      else { return nil }
      var t = RunSummary.Timing(name: name, duration: sane(duration))
      if let after, let kind { t.reason = StartReason(after: after, kind: kind, detail: detail) }
      found.append(t)
    }
    return found
  }
}

extension RecordedSummary {
  /// Seconds read from the store as seconds: NaN, negative or past 30 years (a doctored row)
  /// read as 0.
  static func sane(_ seconds: Double) -> Double { seconds.isFinite && seconds >= 0 && seconds < 1e9 ? seconds : 0 }
}

extension ByteReader {
  /// A byte that is 0 or 1.
  mutating func flagByte() -> Bool? {
    guard at < bytes.count, bytes[at] <= 1 else { return nil }
    at += 1
    return bytes[at - 1] == 1
  }
}
