// Command: what `sh` runs and what it returned; direct exec when no shell is needed (as make).
import FoundationEssentials

/// A command line to run: a shell string or an argv array, with environment and directory.
public struct CommandSpec: Sendable, Equatable {
  public enum Line: Sendable, Equatable {
    case shell(String)
    case argv([String])
  }
  public var line: Line
  /// Added to (and overriding) the inherited environment.
  public var environment: [String: String] = [:]
  public var directory: String?
  /// What the operation that runs it asks `--sandbox` for beyond the defaults (nil: none),
  /// and its CPU and I/O niceness (nil: as taskrun's): in a reference of its own, so the
  /// spec stays the size it was (one byte more made every copy of it an outlined, generic
  /// one: ~700 instructions a command, callgrind).
  private var placement: Placement?

  public var sandbox: SandboxGrant? {
    get { placement?.sandbox }
    set { placement = Placement.make(sandbox: newValue, qos: qos, terminal: usesTerminal) }
  }
  public var qos: QualityOfService? {
    get { placement?.qos }
    set { placement = Placement.make(sandbox: sandbox, qos: newValue, terminal: usesTerminal) }
  }
  /// An interactive operation's command (`interactive = true`): it gets taskrun's standard
  /// input, output and error as they are, and the terminal's foreground while it runs.
  public var usesTerminal: Bool {
    get { placement?.terminal ?? false }
    set { placement = Placement.make(sandbox: sandbox, qos: qos, terminal: newValue) }
  }

  /// Where and how a command runs, beyond its words (immutable: a spec that changes it
  /// gets a new one).
  final class Placement: Sendable, Equatable {
    let sandbox: SandboxGrant?
    let qos: QualityOfService?
    let terminal: Bool
    static func == (a: Placement, b: Placement) -> Bool {
      a.sandbox == b.sandbox && a.qos == b.qos && a.terminal == b.terminal
    }
    private init(sandbox: SandboxGrant?, qos: QualityOfService?, terminal: Bool) {
      (self.sandbox, self.qos, self.terminal) = (sandbox, qos, terminal)
    }
    static func make(sandbox: SandboxGrant?, qos: QualityOfService?, terminal: Bool) -> Placement? {
      sandbox == nil && qos == nil && !terminal ? nil : Placement(sandbox: sandbox, qos: qos, terminal: terminal)
    }
  }

  public init(_ line: Line, environment: [String: String] = [:], directory: String? = nil) {
    self.line = line
    self.environment = environment
    self.directory = directory
  }

  /// The argv actually executed: a string without shell metacharacters is split on blanks
  /// and run directly; anything else goes through `/bin/sh -c`.
  public var argv: [String] {
    switch line {
    case .argv(let argv): return argv
    case .shell(let text):
      let words = Self.plainWords(text)
      // Shell builtins and keywords have no executable of their own.
      guard let words, !words.isEmpty, !CommandSpec.shellWords.contains(words[0]) else {
        return ["/bin/sh", "-c", text]
      }
      return words
    }
  }

  /// `text` split on blanks, in one pass over its bytes; nil if it has a shell character
  /// (every one is ASCII: bytes are enough, and far cheaper than Characters).
  static func plainWords(_ text: String) -> [String]? {
    var text = text
    return text.withUTF8 { bytes -> [String]? in
      let shell = shellBytes
      var words: [String] = []
      var start = -1
      for i in 0...bytes.count {
        let byte = i < bytes.count ? bytes[i] : 32
        if byte == 32 || byte == 9 {
          if start >= 0 {
            words.append(String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<i]), as: UTF8.self))
          }
          start = -1
        } else if byte < 128 && shell[Int(byte)] {
          return nil
        } else if start < 0 {
          start = i
        }
      }
      return words
    }
  }

  /// The whole command, as a fingerprint covers it: the shell text, or the argv quoted.
  var identityText: String {
    if case .shell(let text) = line { return text }
    return display
  }

  /// One line for reports: the text as the user wrote it.
  public var display: String {
    switch line {
    case .shell(let text):
      let lines = text.split(separator: "\n", omittingEmptySubsequences: true)
      return lines.count > 1 ? lines[0].trimmed(newlines: false) + " …" : text
    case .argv(let argv):
      return argv.map { word in
        word.isEmpty || word.contains(where: { " \t\n'\"$`\\|&;<>()*?[]#~".contains($0) })
          ? "'" + word.replacing("'", with: "'\\''") + "'" : word
      }.joined(separator: " ")
    }
  }

  // GNU make's list (job.c sh_chars) plus quoting, escapes, newlines and assignments.
  static let shellCharacters = Set("#;\"*?[]&|<>(){}$`^~!'\\\n=%")
  static let shellBytes: [Bool] = (0..<128).map { byte in
    shellCharacters.contains(Character(Unicode.Scalar(UInt8(byte))))
  }
  static let shellWords: Set<String> = [
    ":", ".", "cd", "exit", "export", "set", "unset", "eval", "exec", "source", "alias",
    "if", "for", "while", "case", "until", "ulimit", "umask", "wait", "trap", "shift", "read",
    // POSIX special and regular builtins that have no executable of their own, and bash's
    "command", "hash", "type", "getopts", "times", "readonly", "local", "return", "break",
    "continue", "unalias", "let", "declare", "typeset", "builtin", "fc", "jobs", "fg", "bg"
  ]
}

/// How a command ended.
public struct CommandResult: Sendable, Equatable {
  /// The fields, behind one reference: a result travels from the runner's thread through the
  /// inbox, the command table and the body's completion, and each hop copied eleven fields
  /// (seven of them counted references). Copy on write keeps it a value.
  private final class Fields: @unchecked Sendable {
    var status: Int32
    var stdoutBytes: [UInt8], stderrBytes: [UInt8]
    var stdoutFile: String?, stderrFile: String?
    var stdoutDropped = 0, stderrDropped = 0
    var stdoutIncomplete: String?, stderrIncomplete: String?
    var reason: String?
    var note: String?
    var peakMemory: Int64?, cpuSeconds: Double?

    init(status: Int32, stdoutBytes: [UInt8], stderrBytes: [UInt8]) {
      (self.status, self.stdoutBytes, self.stderrBytes) = (status, stdoutBytes, stderrBytes)
    }

    func copy() -> Fields {
      let c = Fields(status: status, stdoutBytes: stdoutBytes, stderrBytes: stderrBytes)
      (c.stdoutFile, c.stderrFile, c.reason, c.note) = (stdoutFile, stderrFile, reason, note)
      (c.stdoutDropped, c.stderrDropped) = (stdoutDropped, stderrDropped)
      (c.peakMemory, c.cpuSeconds) = (peakMemory, cpuSeconds)
      (c.stdoutIncomplete, c.stderrIncomplete) = (stdoutIncomplete, stderrIncomplete)
      return c
    }
  }

  private var fields: Fields

  private var writable: Fields {
    mutating get {
      if !isKnownUniquelyReferenced(&fields) { fields = fields.copy() }
      return fields
    }
  }

  /// Peak resident memory (bytes) and CPU seconds of its leader process and what it waited
  /// for, from `wait4` (nil: not known, as for a cluster job).
  public var peakMemory: Int64? {
    get { fields.peakMemory }
    set { writable.peakMemory = newValue }
  }
  public var cpuSeconds: Double? {
    get { fields.cpuSeconds }
    set { writable.cpuSeconds = newValue }
  }
  /// Exit status; 128 + signal number when killed by a signal; 127 when it could not start.
  public var status: Int32 {
    get { fields.status }
    set { writable.status = newValue }
  }
  /// What it wrote, byte for byte: all of it, or past `OutputLimits.memory` the last
  /// `ProcessRunner.tailBytes`, with the whole of it in `stdoutFile` / `stderrFile`.
  public var stdoutBytes: [UInt8] {
    get { fields.stdoutBytes }
    set { writable.stdoutBytes = newValue }
  }
  public var stderrBytes: [UInt8] {
    get { fields.stderrBytes }
    set { writable.stderrBytes = newValue }
  }
  public var stdoutFile: String? {
    get { fields.stdoutFile }
    set { writable.stdoutFile = newValue }
  }
  public var stderrFile: String? {
    get { fields.stderrFile }
    set { writable.stderrFile = newValue }
  }
  /// Bytes of each stream kept neither in memory nor in its file (past `OutputLimits.file`,
  /// or past the memory limit when no file could be made).
  public var stdoutDropped: Int {
    get { fields.stdoutDropped }
    set { writable.stdoutDropped = newValue }
  }
  public var stderrDropped: Int {
    get { fields.stderrDropped }
    set { writable.stderrDropped = newValue }
  }
  /// Why a stream's file holds less than it should, when writing it failed (a full disk,
  /// `ulimit -f`): "writing it failed (…): it holds only the first N bytes of M".
  public var stdoutIncomplete: String? {
    get { fields.stdoutIncomplete }
    set { writable.stdoutIncomplete = newValue }
  }
  public var stderrIncomplete: String? {
    get { fields.stderrIncomplete }
    set { writable.stderrIncomplete = newValue }
  }
  /// Why taskrun ended it, when it did so on its own (a command stopped by the terminal).
  public var reason: String? {
    get { fields.reason }
    set { writable.reason = newValue }
  }

  /// A line taskrun adds to the failure's message: the sandbox rule its errors point at.
  public var note: String? {
    get { fields.note }
    set { writable.note = newValue }
  }

  public init(
    status: Int32, stdoutBytes: [UInt8], stderrBytes: [UInt8], stdoutFile: String? = nil,
    stderrFile: String? = nil, reason: String? = nil
  ) {
    fields = Fields(status: status, stdoutBytes: stdoutBytes, stderrBytes: stderrBytes)
    (fields.stdoutFile, fields.stderrFile, fields.reason) = (stdoutFile, stderrFile, reason)
  }

  public init(status: Int32, stdout: String, stderr: String, reason: String? = nil) {
    self.init(status: status, stdoutBytes: Array(stdout.utf8), stderrBytes: Array(stderr.utf8), reason: reason)
  }

  public static func == (a: CommandResult, b: CommandResult) -> Bool {
    let (x, y) = (a.fields, b.fields)
    return x === y
      || (x.status == y.status && x.stdoutBytes == y.stdoutBytes && x.stderrBytes == y.stderrBytes
        && x.stdoutFile == y.stdoutFile && x.stderrFile == y.stderrFile && x.stdoutDropped == y.stdoutDropped
        && x.stderrDropped == y.stderrDropped && x.stdoutIncomplete == y.stdoutIncomplete
        && x.stderrIncomplete == y.stderrIncomplete && x.reason == y.reason && x.note == y.note)
  }

  /// The output as text, for messages (invalid UTF-8 shown as U+FFFD).
  public var stdout: String { String(decoding: stdoutBytes, as: UTF8.self) }
  public var stderr: String { String(decoding: stderrBytes, as: UTF8.self) }

  /// What a failure's message adds after the command's own words: the note ("; sandbox: …"),
  /// then where its output is.
  public var explanation: String { (note.map { "; " + $0 } ?? "") + whereOutputIs }

  /// " (all of its output: FILE)" when a stream went to a file, with what was dropped; "" else.
  public var whereOutputIs: String {
    var parts: [String] = []
    for (name, file, dropped, incomplete) in [
      ("stdout", stdoutFile, stdoutDropped, stdoutIncomplete),
      ("stderr", stderrFile, stderrDropped, stderrIncomplete)
    ] {
      if let file, let incomplete {
        parts.append("\(file), incomplete: \(incomplete)")
      } else if let file {
        parts.append(dropped == 0 ? file : "\(file), where \(dropped) bytes of its middle were dropped")
      } else if dropped > 0 {
        parts.append("only the last \(ProcessRunner.tailBytes >> 10) KiB of its \(name): \(dropped) bytes were dropped")
      }
    }
    guard !parts.isEmpty else { return "" }
    let whole = stdoutDropped == 0 && stderrDropped == 0 && stdoutIncomplete == nil && stderrIncomplete == nil
    return " (\(whole ? "all of its output" : "its output"): \(parts.joined(separator: "; ")))"
  }

  /// "exited with status 2", "killed by signal 9", or why it could not start.
  public var failureDescription: String {
    if let reason { return reason }
    if status == 127, let reason = stderr.split(separator: "\n").last,
      reason.hasSuffix("command not found") || reason.hasPrefix("cwd '") || reason.hasSuffix("permission denied")
        || reason.contains(": cannot start: ") || reason.hasPrefix("cannot create a pipe")
    {
      return "could not start (\(reason))"
    }
    return status > 128 ? "killed by signal \(status - 128)" : "exited with status \(status)"
  }
}

/// Runs one command as an operation's body: exit status 0 succeeds, anything else fails.
public final class CommandBody: OperationBody {
  public let spec: CommandSpec
  private var token: CommandToken?

  public init(_ spec: CommandSpec) { self.spec = spec }

  public var summary: String { "sh: " + spec.display }
  public var sandbox: SandboxGrant? { spec.sandbox }
  public var identity: [OperationRecord.Part] {
    var parts = [OperationRecord.Part("command", spec.identityText)]
    if !spec.environment.isEmpty {
      parts.append(
        .init("env", spec.environment.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " "))
      )
    }
    if let directory = spec.directory { parts.append(.init("cwd", directory)) }
    return parts
  }

  public func start(_ operation: OperationNode, scheduler: Scheduler) {
    token = scheduler.runCommand(spec, for: operation, remote: true) { [weak operation] result in
      guard let operation else { return }
      operation.commandResult = result
      // A timed-out command's operation fails, so its message names the files as a failure's does.
      let fails = operation.isCancelled ? operation.timedOut : result.status != 0
      if !fails {  // no failure message names its files
        SpillFolder.shared.discard(result.stdoutFile)
        SpillFolder.shared.discard(result.stderrFile)
      }
      if operation.isCancelled && fails {  // the reason it was stopped, and where its output is
        scheduler.finish(operation, .failed, error: (operation.error ?? "cancelled") + result.whereOutputIs)
      } else if operation.isCancelled {
        scheduler.finish(operation, .cancelled)  // keeps the reason: cancelled, interrupted
      } else if result.status == 0 {
        scheduler.finish(operation, .succeeded)
      } else {  // the message names its files: they stay (Scheduler.finish)
        scheduler.finish(
          operation, .failed,
          error: result.failureDescription + ": " + self.spec.display
            + result.explanation, kind: .command)
      }
    }
  }

  public func interrupt(_ operation: OperationNode, scheduler: Scheduler, reason: String) {
    if let token { scheduler.terminateCommand(token) }
  }
}

/// "1.5 s", "2 min 3 s": a duration as people read it.
public func formatSeconds(_ seconds: Double) -> String {
  guard seconds.isFinite, seconds < Limits.maxSeconds else { return "forever" }
  let seconds = max(0, seconds)  // a negative value (a clock that moved, a doctored store) reads as 0
  if seconds < 60 {
    return seconds == seconds.rounded() ? "\(Int(seconds)) s" : formatFixed(seconds, 2) + " s"
  }
  let whole = Int(seconds.rounded())
  return "\(whole / 60) min \(whole % 60) s"
}

/// `value` with `digits` (0 to 3) decimals, as `%.Nf` prints it (but never "-0.00") without Foundation's
/// formatter, which costs a microsecond a line: reports print one per operation.
public func formatFixed(_ value: Double, _ digits: Int) -> String {
  let digits = min(max(digits, 0), 3)
  guard value.isFinite, abs(value) < 1e15 else { return cFormat("%.\(digits)f", value) }
  let scale = [1, 10, 100, 1000][digits]
  let units = Int((abs(value) * Double(scale)).rounded(.toNearestOrAwayFromZero))
  var text = (value < 0 && units != 0 ? "-" : "") + String(units / scale)
  if digits > 0 {
    let fraction = String(units % scale)
    text += "." + String(repeating: "0", count: digits - fraction.count) + fraction
  }
  return text
}
