// ControlSocket: a run's private socket, through which `taskrun status|watch|cancel|pause|resume` reach it from another terminal.
import CSpawn
import Dispatch
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

/// The run's end of the socket: accepts connections off the scheduler's thread (`serve`: a
/// wait for a connection does not keep the run going), answers them on it. Requests are one
/// line: `status`, `watch`, or `cancel|pause|resume` with an operation's name after a tab.
/// Only this user's processes are answered (the folder is theirs, and the peer's uid is
/// checked).
final class ControlSocket {
  /// The socket of this process's run, removed on every way out (`removeAll`).
  private static let published = Mutex<String?>(nil)

  private let scheduler: Scheduler
  private let script: String
  private let path: String
  private let listener: Int32
  private let queue = DispatchQueue(label: "taskrun.control", attributes: .concurrent)
  /// Connections that watch: written to at every quarter second until the run ends.
  private var watchers: Set<Int32> = []
  private var closed = false

  /// Publishes the run (its script's path) at `<folder>/<pid>.sock`. A leftover socket of
  /// that name (a killed run whose pid came round again) is replaced.
  init(scheduler: Scheduler, script: String) throws(ControlError) {
    self.scheduler = scheduler
    self.script = script
    let folder = try ControlFolder.path(create: true)
    let path = folder + "/\(getpid()).sock"
    self.path = path
    var address = sockaddr_un()
    address.sun_family = sa_family_t(AF_UNIX)
    guard path.utf8.count < MemoryLayout.size(ofValue: address.sun_path) else {
      throw ControlError("the socket's path is too long: \(path)")
    }
    withUnsafeMutableBytes(of: &address.sun_path) { raw in
      raw.copyBytes(from: path.utf8)
      raw[path.utf8.count] = 0
    }
    let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
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
    acceptNext()
  }

  /// Removes the published socket (every way out of the process calls it).
  static func removeAll() {
    published.withLock { path in
      if let path { unlink(path) }
      path = nil
    }
  }

  /// The next connection's request, answered on the scheduler's thread.
  private func acceptNext() {
    let listener = self.listener
    scheduler.loop.serve(on: queue, { Self.acceptRequest(on: listener) }) { [weak self] request in
      guard let self, !closed, let request else { return }
      acceptNext()
      answer(request)
    }
  }

  /// Blocks for a connection of this user's and reads its request: "FD REQUEST", "" for one
  /// refused, nil once the listener is closed.
  private static func acceptRequest(on listener: Int32) -> String? {
    let client = accept(listener, nil, nil)
    guard client >= 0 else { return errno == EINTR || errno == ECONNABORTED ? "" : nil }
    _ = fcntl(client, F_SETFD, FD_CLOEXEC)
    guard cs_peer_uid(client) == Int(getuid()) else {
      close(client)
      return ""
    }
    var limit = timeval(tv_sec: 2, tv_usec: 0)
    setsockopt(client, SOL_SOCKET, SO_RCVTIMEO, &limit, socklen_t(MemoryLayout<timeval>.size))
    setsockopt(client, SOL_SOCKET, SO_SNDTIMEO, &limit, socklen_t(MemoryLayout<timeval>.size))
    var line: [UInt8] = []
    var byte: UInt8 = 0
    while line.count < 4096, read(client, &byte, 1) == 1, byte != 10 { line.append(byte) }
    return "\(client) " + String(decoding: line, as: UTF8.self)
  }

  /// Answers "FD REQUEST" (scheduler's thread).
  private func answer(_ request: String) {
    guard let space = request.firstIndex(of: " "), let fd = Int32(request[..<space]) else { return }
    // "pause" is the whole run; "pause<TAB>NAME" one operation, whatever NAME is (even empty).
    let words = request[request.index(after: space)...].split(
      separator: "\t", maxSplits: 1, omittingEmptySubsequences: false
    ).map(String.init)
    switch words.first {
    case "status":
      send(status(), to: fd)
      close(fd)
    case "watch":
      watchers.insert(fd)
      send(status(), to: fd)
      tickWatcher(fd)
    case let word? where ControlAction(rawValue: word) != nil:
      let problem = scheduler.control(
        ControlAction(rawValue: word)!, operation: words.count > 1 ? words[1] : nil, by: "taskrun \(word)")
      send(ControlReply(ok: problem == nil, error: problem), to: fd)
      close(fd)
    default:
      send(ControlReply(ok: false, error: "unknown request"), to: fd)
      close(fd)
    }
  }

  /// The watcher gets the run's status a quarter second from now (the wait is done off the
  /// scheduler's thread, so it keeps no run going).
  private func tickWatcher(_ fd: Int32) {
    scheduler.loop.serve(
      on: queue,
      {
        usleep(250_000); return ""
      }
    ) { [weak self] _ in
      guard let self, !closed, watchers.contains(fd) else { return }
      if send(status(), to: fd) { tickWatcher(fd) } else { drop(fd) }
    }
  }

  private func drop(_ fd: Int32) {
    watchers.remove(fd)
    close(fd)
  }

  /// The run ended (`summary` says how): watchers get a last message, the socket goes.
  func end(summary: String) {
    guard !closed else { return }
    closed = true
    var last = status()
    last.ended = summary
    for fd in watchers {
      send(last, to: fd)
      Glibc.close(fd)
    }
    watchers = []
    shutdown(listener, Int32(SHUT_RDWR))  // wakes the accept that waits
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
        let n = Glibc.send(fd, raw.baseAddress! + offset, raw.count - offset, Int32(MSG_NOSIGNAL))
        if n < 0 && errno == EINTR { continue }
        guard n > 0 else { return false }
        offset += n
      }
      return true
    }
  }
}
