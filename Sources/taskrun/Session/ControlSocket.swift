// ControlSocket: a run's private socket, through which `taskrun status|watch|cancel|pause|resume` reach it from another terminal.
import CSpawn
import FoundationEssentials
import Glibc
import Synchronization
import TaskEngine

/// The folder of the runs' sockets: `$XDG_RUNTIME_DIR/taskrun` when that variable names a
/// folder of this user's that only they can open, else `/tmp/taskrun-UID`. Made mode 0700;
/// used only when it is a real folder (not a link), owned by this user, that no one else can
/// open: anything else (a folder another user planted) is refused, never used or changed.
enum ControlFolder {
  static func path(create: Bool) throws(ControlError) -> String {
    let uid = getuid()
    var base = "/tmp/taskrun-\(uid)"
    if let runtime = Environment.variable("XDG_RUNTIME_DIR"), runtime.hasPrefix("/"), isPrivate(runtime, uid) {
      base = runtime + "/taskrun"
    }
    if create && mkdir(base, 0o700) != 0 && errno != EEXIST {
      throw ControlError("cannot make \(base): \(String(cString: strerror(errno)))")
    }
    guard isPrivate(base, uid) else {
      throw ControlError("\(base) is not a private folder of this user (mode 0700, not a link): not used")
    }
    return base
  }

  /// A folder (not a link) owned by `uid` that no one else may open.
  static func isPrivate(_ path: String, _ uid: uid_t) -> Bool {
    var info = stat()
    guard lstat(path, &info) == 0 else { return false }
    return info.st_mode & S_IFMT == S_IFDIR && info.st_uid == uid && info.st_mode & 0o077 == 0
  }

  /// The sockets in the folder, by the pid in their name.
  static func sockets(in folder: String) -> [(pid: Int32, path: String)] {
    guard let dir = opendir(folder) else { return [] }
    defer { closedir(dir) }
    var found: [(Int32, String)] = []
    while let entry = readdir(dir) {
      let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
      guard name.hasSuffix(".sock"), let pid = Int32(name.dropLast(5)), pid > 0 else { continue }
      found.append((pid, folder + "/" + name))
    }
    return found.sorted { $0.0 < $1.0 }
  }
}

struct ControlError: Error, CustomStringConvertible {
  let description: String
  init(_ description: String) { self.description = description }
}

/// What a run says about itself: to `status` once, to `watch` every quarter second.
struct RunStatus: Codable {
  struct Operation: Codable {
    var name: String
    var elapsed: Double
    var paused: Bool
    var fraction: Double?
    var description: String?
    var additionalDescription: String?
  }
  var pid: Int32
  var script: String
  var elapsed: Double
  var fraction: Double
  var done: Int
  var running: Int
  var pending: Int
  var failed: Int
  var cancelled: Int
  var paused: Bool
  var stopping: Bool
  var eta: Double?
  var operations: [Operation]
  /// Set in the last message to a watcher: the run's summary line.
  var ended: String?
}

/// The answer to cancel, pause or resume.
struct ControlReply: Codable {
  var ok: Bool
  var error: String?
}

/// The run's end of the socket, watched by the scheduler's own `poll` (no thread, no
/// Dispatch: a run short of descriptors must not lose them to its socket, and libdispatch
/// traps when it cannot make its own): connections are accepted and their one-line requests
/// read there, and answered on the loop's turn (a registered service). Requests are `status`,
/// `watch`, or `cancel|pause|resume` with an operation's name after a tab. Only this user's
/// processes are answered (the folder is theirs, and the peer's uid is checked). A run busy in
/// Lua code that does not yield answers when it next waits.
final class ControlSocket: DescriptorSource {
  /// The socket of this process's run, removed on every way out (`removeAll`).
  private static let published = Mutex<String?>(nil)
  /// Seconds a connection has to send its request, and between a watcher's messages.
  static let requestTime = 2.0
  static let watchInterval = 0.25

  private let scheduler: Scheduler
  private let script: String
  private let listener: Int32
  /// The loop's number for what `handle` posts.
  @exclusivity(unchecked) private var service = 0
  /// Connections whose request has not all come, with what came and until when it may.
  @exclusivity(unchecked) private var reading: [(fd: Int32, bytes: [UInt8], until: Double)] = []
  /// Connections that watch: written to every `watchInterval` until the run ends.
  @exclusivity(unchecked) private var watchers: [Int32] = []
  @exclusivity(unchecked) private var nextWatch = 0.0
  @exclusivity(unchecked) private var closed = false

  /// Publishes the run (its script's path) at `<folder>/<pid>.sock`. A leftover socket of
  /// that name (a killed run whose pid came round again) is replaced.
  init(scheduler: Scheduler, script: String) throws(ControlError) {
    self.scheduler = scheduler
    self.script = script
    let folder = try ControlFolder.path(create: true)
    let path = folder + "/\(getpid()).sock"
    var address = sockaddr_un()
    address.sun_family = sa_family_t(AF_UNIX)
    guard path.utf8.count < MemoryLayout.size(ofValue: address.sun_path) else {
      throw ControlError("the socket's path is too long: \(path)")
    }
    withUnsafeMutableBytes(of: &address.sun_path) { raw in
      raw.copyBytes(from: path.utf8)
      raw[path.utf8.count] = 0
    }
    let fd = socket(
      AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0)
    guard fd >= 0 else { throw ControlError("socket: \(String(cString: strerror(errno)))") }
    unlink(path)
    let bound = withUnsafePointer(to: &address) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
    }
    guard bound == 0, chmod(path, 0o600) == 0, listen(fd, 16) == 0 else {
      let message = String(cString: strerror(errno))
      Glibc.close(fd)
      throw ControlError("cannot publish the run at \(path): \(message)")
    }
    listener = fd
    Self.published.withLock { $0 = path }
    service = scheduler.loop.register { [weak self] message in self?.answer(message ?? "") }
    scheduler.loop.watch(self)
  }

  /// Removes the published socket (every way out of the process calls it).
  static func removeAll() {
    published.withLock { path in
      if let path { unlink(path) }
      path = nil
    }
  }

  // MARK: Watched by the loop's poll (it only reads and posts)

  func watch(_ fds: inout [pollfd]) -> Double? {
    guard !closed else { return nil }
    fds.append(pollfd(fd: listener, events: Int16(POLLIN), revents: 0))
    if reading.isEmpty && watchers.isEmpty { return nil }  // the common case: nobody is asking
    for client in reading { fds.append(pollfd(fd: client.fd, events: Int16(POLLIN), revents: 0)) }
    let now = MonotonicClock.seconds()
    var limit: Double?
    if !watchers.isEmpty { limit = max(0, nextWatch - now) }
    for client in reading { limit = min(limit ?? .infinity, max(0, client.until - now)) }
    return limit
  }

  func handle(_ fds: [pollfd], from first: Int) {
    guard !closed, first < fds.count, fds[first].fd == listener else { return }
    if fds[first].revents == 0 && reading.isEmpty && watchers.isEmpty { return }
    let now = MonotonicClock.seconds()
    var i = first + 1
    var still: [(fd: Int32, bytes: [UInt8], until: Double)] = []
    for var client in reading {
      defer { i += 1 }
      guard i < fds.count, fds[i].fd == client.fd, fds[i].revents != 0 else {
        if now < client.until { still.append(client) } else { Glibc.close(client.fd) }
        continue
      }
      var chunk = [UInt8](repeating: 0, count: 4096)
      let n = read(client.fd, &chunk, chunk.count)
      if n > 0 { client.bytes += chunk[..<n] }
      if let newline = client.bytes.firstIndex(of: 10) {
        post("\(client.fd) " + String(decoding: client.bytes[..<newline], as: UTF8.self))
      } else if n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR) || client.bytes.count > 4096
        || now >= client.until
      {
        Glibc.close(client.fd)
      } else {
        still.append(client)
      }
    }
    reading = still
    if fds[first].revents != 0 { acceptAll(until: now + Self.requestTime) }
    if !watchers.isEmpty && now >= nextWatch {
      nextWatch = now + Self.watchInterval
      post("tick")
    }
  }

  /// Takes every waiting connection of this user's; others are closed at once.
  private func acceptAll(until deadline: Double) {
    while reading.count < 64 {
      let client = accept(listener, nil, nil)
      guard client >= 0 else { return }
      _ = fcntl(client, F_SETFD, FD_CLOEXEC)
      _ = fcntl(client, F_SETFL, fcntl(client, F_GETFL) | O_NONBLOCK)
      guard cs_peer_uid(client) == Int(getuid()) else {
        Glibc.close(client)
        continue
      }
      reading.append((client, [], deadline))
    }
  }

  private func post(_ message: String) {
    scheduler.inbox.post(.completion(token: service, answer: message))
  }

  // MARK: On the loop's turn

  /// Answers "FD REQUEST", or writes the watchers' status at a "tick".
  private func answer(_ message: String) {
    guard !closed else { return }
    if message == "tick" {
      let now = status()
      watchers.removeAll { fd in
        if send(now, to: fd) { return false }
        Glibc.close(fd)
        return true
      }
      return
    }
    guard let space = message.firstIndex(of: " "), let fd = Int32(message[..<space]) else { return }
    // "pause" is the whole run; "pause<TAB>NAME" one operation, whatever NAME is (even empty).
    let words = message[message.index(after: space)...].split(
      separator: "\t", maxSplits: 1, omittingEmptySubsequences: false
    ).map(String.init)
    switch words.first {
    case "status":
      send(status(), to: fd)
      Glibc.close(fd)
    case "watch":
      if send(status(), to: fd) {
        if watchers.isEmpty { nextWatch = MonotonicClock.seconds() + Self.watchInterval }
        watchers.append(fd)
      } else {
        Glibc.close(fd)
      }
    case let word? where ControlAction(rawValue: word) != nil:
      let problem = scheduler.control(
        ControlAction(rawValue: word)!, operation: words.count > 1 ? words[1] : nil, by: "taskrun \(word)")
      send(ControlReply(ok: problem == nil, error: problem), to: fd)
      Glibc.close(fd)
    default:
      send(ControlReply(ok: false, error: "unknown request"), to: fd)
      Glibc.close(fd)
    }
  }

  /// The run ended (`summary` says how): watchers get a last message, the socket goes.
  func end(summary: String) {
    guard !closed else { return }
    var last = status()
    last.ended = summary
    closed = true
    for fd in watchers {
      send(last, to: fd)
      Glibc.close(fd)
    }
    for client in reading { Glibc.close(client.fd) }
    (watchers, reading) = ([], [])
    Glibc.close(listener)
    Self.removeAll()
  }

  private func status() -> RunStatus {
    let snapshot = scheduler.snapshot()
    let p = snapshot.progress
    return RunStatus(
      pid: getpid(), script: script, elapsed: snapshot.elapsed, fraction: p.fraction, done: p.done,
      running: p.running, pending: p.pending, failed: p.failed, cancelled: p.cancelled, paused: snapshot.paused,
      stopping: p.stopping, eta: p.eta,
      operations: snapshot.operations.map { op in
        RunStatus.Operation(
          name: op.name, elapsed: op.elapsed, paused: op.paused, fraction: op.progress?.fraction,
          description: op.progress?.description, additionalDescription: op.progress?.additionalDescription)
      })
  }

  /// Writes `message` as one JSON line; false if the other end is gone.
  @discardableResult
  private func send(_ message: some Encodable, to fd: Int32) -> Bool {
    guard var data = try? JSONEncoder().encode(message) else { return false }
    data.append(10)
    return data.withUnsafeBytes { raw in
      var offset = 0
      while offset < raw.count {
        // Never waits: a reader that does not read (a stopped `watch`) is dropped instead.
        let n = Glibc.send(fd, raw.baseAddress! + offset, raw.count - offset, Int32(MSG_NOSIGNAL | MSG_DONTWAIT))
        if n < 0 && errno == EINTR { continue }
        guard n > 0 else { return false }
        offset += n
      }
      return true
    }
  }
}
