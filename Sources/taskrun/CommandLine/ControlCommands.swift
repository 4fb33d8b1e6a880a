// taskrun status, watch, cancel, pause, resume: another terminal's view of and hand on this user's runs.
import ArgumentParser
import CSpawn
import FoundationEssentials
import Glibc
import TaskEngine

/// The client side of `ControlSocket`: finds this user's runs, asks them, removes the
/// sockets of runs that are gone (killed before they could remove their own).
enum ControlClient {
  /// The clients wait for nothing but a socket: Ctrl-C, SIGTERM and SIGHUP end them at once
  /// (taskrun blocks signals for its own watcher thread, which only a run's loop reads).
  static func signalsEndUs() {
    var set = sigset_t()
    sigemptyset(&set)
    for signal in [SIGINT, SIGTERM, SIGHUP] {
      Glibc.signal(signal, SIG_DFL)
      sigaddset(&set, signal)
    }
    pthread_sigmask(SIG_UNBLOCK, &set, nil)
  }

  /// Every live run's socket, stale ones removed.
  static func runs() throws(ControlError) -> [(pid: Int32, path: String)] {
    let folder = try ControlFolder.path(create: false)
    return ControlFolder.sockets(in: folder).filter { run in
      guard let fd = connect(run.path) else {
        unlink(run.path)  // no one listens: a run that was killed
        return false
      }
      close(fd)
      return true
    }
  }

  /// The run `word` names: its pid, or its script's name or path (one run only).
  static func run(named word: String) throws(ControlError) -> (pid: Int32, path: String) {
    let live = try runs()
    if let pid = Int32(word) {
      guard let run = live.first(where: { $0.pid == pid }) else {
        throw ControlError("no run of this user has pid \(pid) (taskrun status lists them)")
      }
      return run
    }
    var silent: [Int32] = []
    let matches = live.filter { run in
      let status: RunStatus
      do { status = try request("status", at: run.path, seconds: 2) } catch {
        silent.append(run.pid)
        return false
      }
      return status.script == word || status.script.hasSuffix("/" + word)
    }
    let shown = TerminalText.escaped(word)
    guard matches.count == 1 else {
      if matches.isEmpty && !silent.isEmpty {
        throw ControlError(
          "no answering run of this user runs '\(shown)'; not answering: "
            + silent.map(String.init).joined(separator: ", ")
            + " (busy in Lua code that does not yield? name it by its pid)")
      }
      throw ControlError(
        matches.isEmpty
          ? "no run of this user runs '\(shown)' (taskrun status lists them)"
          : "\(matches.count) runs run '\(shown)': name one by its pid (taskrun status lists them)")
    }
    return matches[0]
  }

  /// A connection to the socket at `path`, or nil if no one listens there.
  static func connect(_ path: String) -> Int32? {
    var address = sockaddr_un()
    address.sun_family = sa_family_t(AF_UNIX)
    guard path.utf8.count < MemoryLayout.size(ofValue: address.sun_path) else { return nil }
    withUnsafeMutableBytes(of: &address.sun_path) { raw in
      raw.copyBytes(from: path.utf8)
      raw[path.utf8.count] = 0
    }
    let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
    guard fd >= 0 else { return nil }
    let rc = withUnsafePointer(to: &address) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
        Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
      }
    }
    guard rc == 0 else {
      close(fd)
      return nil
    }
    return fd
  }

  /// Sends `line` and decodes the one line that answers it, within `seconds` in all (a run
  /// busy in Lua code that does not yield answers when it next waits).
  static func request<T: Decodable>(_ line: String, at path: String, seconds: Double = 10) throws(ControlError) -> T {
    guard let fd = connect(path) else { throw ControlError("the run at \(path) has ended") }
    defer { close(fd) }
    writeAll(fd, (line + "\n").utf8)
    var reader = LineReader(fd: fd, deadline: seconds)
    let answer: String
    switch reader.next() {
    case .line(let text): answer = text
    case .ended: throw ControlError("the run closed the connection without an answer")
    case .late: throw ControlError("the run did not answer within \(formatSeconds(seconds))")
    case .tooLong: throw ControlError("the run's answer is longer than \(LineReader.limit >> 20) MB: not taskrun's")
    }
    do { return try JSONDecoder().decode(T.self, from: Data(answer.utf8)) } catch {
      throw ControlError("the run's answer is not what taskrun sends: \(DisplayQuote.of(answer))")
    }
  }

  /// Lines from a socket, as they come, each within the time left of a deadline (nil: none)
  /// and at most `limit` bytes long.
  struct LineReader {
    enum Next {
      case line(String)
      case ended, late, tooLong
    }
    static let limit = 16 << 20
    let fd: Int32
    private let deadline: Double?
    private var buffer: [UInt8] = []

    init(fd: Int32, deadline seconds: Double? = nil) {
      self.fd = fd
      deadline = seconds.map { Self.now() + $0 }
    }

    static func now() -> Double {
      var t = timespec()
      clock_gettime(CLOCK_MONOTONIC, &t)
      return Double(t.tv_sec) + Double(t.tv_nsec) / 1e9
    }

    mutating func next() -> Next {
      while true {
        if let newline = buffer.firstIndex(of: 10) {
          let line = String(decoding: buffer[..<newline], as: UTF8.self)
          buffer.removeSubrange(...newline)
          return .line(line)
        }
        if buffer.count > Self.limit { return .tooLong }
        var ready = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        let wait = deadline.map { Int32(max(0, ($0 - Self.now()) * 1000).rounded(.up)) } ?? -1
        let polled = poll(&ready, 1, wait)
        if polled < 0 && errno == EINTR { continue }
        if polled == 0 { return .late }
        var chunk = [UInt8](repeating: 0, count: 65536)
        let n = read(fd, &chunk, chunk.count)
        if n < 0 && (errno == EINTR || errno == EAGAIN) { continue }
        guard n > 0 else { return .ended }
        buffer += chunk[..<n]
      }
    }
  }

  /// A reply's text, shortened and with its control characters escaped.
  enum DisplayQuote {
    static func of(_ text: String) -> String {
      let cut = text.count > 80 ? String(text.prefix(80)) + "…" : text
      return "'" + TerminalText.escaped(cut).replacing("\t", with: "\\t") + "'"
    }
  }

  /// "[████░░░░] 40%  3 done  2 running  1 pending  0:05 elapsed" for a run.
  static func overall(_ status: RunStatus) -> String {
    let words = ProgressLanguage.current
    var parts = [bar(status.fraction, width: 20) + " \(Int(status.fraction * 100))%"]
    if status.paused { parts.append(words.status(.paused)) }
    if status.stopping { parts.append(words.status(.stopping)) }
    parts.append(words.status(.done, status.done))
    if status.failed > status.cancelled { parts.append(words.status(.failed, status.failed - status.cancelled)) }
    if status.cancelled > 0 { parts.append(words.status(.cancelled, status.cancelled)) }
    parts.append(words.status(.running, status.running))
    parts.append(words.status(.pending, status.pending))
    parts.append(clock(status.elapsed) + " " + words.status(.elapsed))
    if let eta = status.eta { parts.append(words.status(.eta) + " " + clock(eta)) }
    return parts.joined(separator: "  ")
  }

  /// "  name [██░░] 50%  Downloading — 2 of 5  paused  1.2s"
  static func row(_ op: RunStatus.Operation) -> String {
    var line = "  " + TerminalText.escaped(op.name)
    if let fraction = op.fraction { line += " " + bar(fraction, width: 12) + " \(Int(fraction * 100))%" }
    let words = [op.description ?? "", op.additionalDescription ?? ""].filter {
      !$0.isEmpty && !ProgressLanguage.current.isPercentCompleted($0)
    }
    if !words.isEmpty { line += "  " + TerminalText.escaped(words.joined(separator: " — ")) }
    if op.paused { line += "  " + ProgressLanguage.current.status(.paused) }
    return line + "  " + (op.elapsed < 60 ? formatFixed(op.elapsed, 1) + "s" : clock(op.elapsed))
  }

  static func bar(_ fraction: Double, width: Int) -> String {
    let filled = Int((min(1, max(0, fraction)) * Double(width)).rounded(.down))
    return "[" + String(repeating: "█", count: filled) + String(repeating: "░", count: width - filled) + "]"
  }

  static func clock(_ seconds: Double) -> String {
    let whole = Int(max(0, min(seconds, 1e9)))
    let (h, m, s) = (whole / 3600, whole / 60 % 60, whole % 60)
    let two = { (n: Int) in n < 10 ? "0\(n)" : "\(n)" }
    return h > 0 ? "\(h):\(two(m)):\(two(s))" : "\(m):\(two(s))"
  }

  static func fail(_ error: ControlError) -> Taskrun.Exit {
    TerminalText.writeMessage("taskrun: \(error.description)")
    return Taskrun.Exit(.failure)
  }
}

/// The language option the control commands share with a run.
struct LanguageOption: ParsableArguments {
  @Option(help: "The language of the progress words: en, zh or ru (default: the locale's).")
  var lang: LanguageChoice?

  func apply() { if let lang { ProgressLanguage.current = lang.language } }
}

struct StatusCommand: ParsableCommand, InvokedCommand {
  static let configuration = CommandConfiguration(
    commandName: "status",
    abstract: "List this user's running taskrun runs with their progress.",
    usage: "taskrun status [--json] [--lang en|zh|ru]")

  @Flag(help: "One JSON object a line, as the run says it (fields: pid, script, fraction, done, running, …).")
  var json = false

  @OptionGroup var language: LanguageOption

  func run(_ invocation: Invocation, choice: CommandChoice) throws {
    language.apply()
    ControlClient.signalsEndUs()
    let runs: [(pid: Int32, path: String)]
    do { runs = try ControlClient.runs() } catch { throw ControlClient.fail(error) }
    for run in runs {
      let status: RunStatus
      do { status = try ControlClient.request("status", at: run.path, seconds: 2) } catch {
        print("\(run.pid)  (not answering: \(error); busy in Lua code that does not yield?)")
        continue
      }
      if json {
        if let data = try? JSONEncoder().encode(status) { print(String(decoding: data, as: UTF8.self)) }
      } else {
        print("\(status.pid)  \(TerminalText.escaped(status.script))")
        print("  " + ControlClient.overall(status))
        for op in status.operations { print("  " + ControlClient.row(op)) }
      }
    }
    if runs.isEmpty && !json { print("no taskrun runs of this user") }
    throw Taskrun.Exit(.success)
  }
}

struct WatchCommand: ParsableCommand, InvokedCommand {
  static let configuration = CommandConfiguration(
    commandName: "watch",
    abstract: "Show the live view of a run started elsewhere, until it ends.",
    usage: "taskrun watch RUN [--lang en|zh|ru]",
    discussion: "RUN is a pid or the run's script, as taskrun status lists them.")

  @Argument(help: "The run: its pid, or its script.") var run: String
  @OptionGroup var language: LanguageOption

  func run(_ invocation: Invocation, choice: CommandChoice) throws {
    language.apply()
    ControlClient.signalsEndUs()
    let target: (pid: Int32, path: String)
    do { target = try ControlClient.run(named: run) } catch { throw ControlClient.fail(error) }
    guard let fd = ControlClient.connect(target.path) else {
      throw ControlClient.fail(ControlError("the run \(target.pid) has ended"))
    }
    writeAll(fd, "watch\n".utf8)
    var reader = ControlClient.LineReader(fd: fd)
    let live = isatty(STDOUT_FILENO) != 0
    var drawn = 0
    var lastLine = ""
    var lastPrint = 0.0
    while case .line(let line) = reader.next() {
      guard let status = try? JSONDecoder().decode(RunStatus.self, from: Data(line.utf8)) else {
        throw ControlClient.fail(
          ControlError("the run's message is not what taskrun sends: \(ControlClient.DisplayQuote.of(line))"))
      }
      let overall = ControlClient.overall(status)
      if live {
        var frame = drawn > 0 ? "\u{1B}[\(drawn)A\u{1B}[J" : ""
        let lines =
          ["\(status.pid)  " + TerminalText.escaped(status.script), overall] + status.operations.map(ControlClient.row)
        frame += lines.joined(separator: "\n") + "\n"
        writeAll(STDOUT_FILENO, frame.utf8)
        drawn = lines.count
      } else if status.ended != nil || (overall != lastLine && status.elapsed - lastPrint >= 1) {
        print(overall)
        fflush(nil)
        (lastLine, lastPrint) = (overall, status.elapsed)
      }
      if let ended = status.ended {
        print("run \(status.pid) ended: \(ended)")
        throw Taskrun.Exit(.success)
      }
    }
    print("run \(target.pid) ended")
    throw Taskrun.Exit(.success)
  }
}

/// `taskrun cancel|pause|resume RUN [OPERATION]`: through the operation's progress, or the run.
protocol ControlActionCommand: ParsableCommand, InvokedCommand {
  static var action: ControlAction { get }
  var run: String { get }
  var operation: String? { get }
}

extension ControlActionCommand {
  /// The help of `taskrun cancel|pause|resume`.
  static func help(_ action: ControlAction, _ what: String) -> CommandConfiguration {
    CommandConfiguration(
      commandName: action.rawValue,
      abstract: "\(what) a run started elsewhere, or one of its operations (through its progress).",
      usage: "taskrun \(action.rawValue) RUN [OPERATION]",
      discussion: "RUN is a pid or the run's script, as taskrun status lists them.")
  }

  func run(_ invocation: Invocation, choice: CommandChoice) throws {
    ControlClient.signalsEndUs()
    if let operation, operation.isEmpty {
      throw ControlClient.fail(ControlError("no operation is named '' (leave OPERATION out for the whole run)"))
    }
    let target: (pid: Int32, path: String)
    do { target = try ControlClient.run(named: run) } catch { throw ControlClient.fail(error) }
    let line = Self.action.rawValue + (operation.map { "\t" + $0 } ?? "")
    let reply: ControlReply
    do { reply = try ControlClient.request(line, at: target.path) } catch { throw ControlClient.fail(error) }
    guard reply.ok else {
      throw ControlClient.fail(ControlError(TerminalText.escaped(reply.error ?? "refused")))
    }
    throw Taskrun.Exit(.success)
  }
}

struct CancelCommand: ControlActionCommand {
  static let action = ControlAction.cancel
  static let configuration = help(.cancel, "Cancel")
  @Argument(help: "The run: its pid, or its script.") var run: String
  @Argument(help: "An operation of the run (none: the whole run).") var operation: String?
}

struct PauseCommand: ControlActionCommand {
  static let action = ControlAction.pause
  static let configuration = help(.pause, "Pause")
  @Argument(help: "The run: its pid, or its script.") var run: String
  @Argument(help: "An operation of the run (none: the whole run).") var operation: String?
}

struct ResumeCommand: ControlActionCommand {
  static let action = ControlAction.resume
  static let configuration = help(.resume, "Resume")
  @Argument(help: "The run: its pid, or its script.") var run: String
  @Argument(help: "An operation of the run (none: the whole run).") var operation: String?
}
