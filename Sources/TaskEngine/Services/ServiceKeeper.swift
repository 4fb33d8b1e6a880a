// ServiceKeeper: the long-running commands of `service = true` operations, kept up across the cycles of `taskrun -w`.
import CSpawn
import FoundationEssentials
import Glibc

/// Owns the processes of services: each runs in a process group of its own, writing to a log
/// file in taskrun's private spill folder, and outlives the operation that started it (which
/// ends when the service is ready). A service is found again by its operation's name and what
/// it runs; it is stopped (TERM to its group, KILL after the grace) when it must restart, and
/// all of them when the run (or `-w`'s last cycle) ends. Its group is signalled only while its
/// leader is unreaped, so the id is still taskrun's.
public final class ServiceKeeper: DescriptorSource {
  /// One running service.
  public final class Service {
    public let name: String
    /// What it runs (`RunMemory.identityDigest`): a service running something else restarts.
    let identity: String
    public let pid: pid_t
    let pidfd: Int32
    /// Its output, both streams.
    public let log: String
    /// Its exit status once it ended (and was reaped; -1: unknown).
    public fileprivate(set) var status: Int32?

    /// "exited with status 1", "was killed by signal 9", "ended".
    public var ending: String {
      guard let status, status >= 0 else { return "ended" }
      return status > 128 ? "was killed by signal \(status - 128)" : "exited with status \(status)"
    }

    init(name: String, identity: String, pid: pid_t, pidfd: Int32, log: String) {
      (self.name, self.identity, self.pid, self.pidfd, self.log) = (name, identity, pid, pidfd, log)
    }
  }

  private var services: [String: Service] = [:]
  /// Services that ended by themselves since the last `takeEnded`.
  private var ended: [Service] = []
  /// Called on the scheduler's thread when a service ended by itself.
  public var onEnd: () -> Void = {}
  private var notice = 0
  private weak var loop: EventLoop?

  public init() {}

  /// The services running now, by name.
  public var running: [Service] { services.values.sorted { $0.name < $1.name } }

  /// Has `scheduler`'s loop watch the services' exits (`onEnd`); once per loop.
  public func attach(to scheduler: Scheduler) {
    guard loop !== scheduler.loop else { return }
    loop = scheduler.loop
    notice = scheduler.loop.register { [weak self] _ in self?.onEnd() }
    scheduler.loop.watch(self)
  }

  /// Whether `service` is the one running under its name, still running.
  func isRunning(_ service: Service) -> Bool {
    services[service.name] === service && notEnded(service)
  }

  /// The service `name` if it still runs what `identity` says.
  func service(_ name: String, identity: String) -> Service? {
    guard let service = services[name], service.identity == identity else { return nil }
    return notEnded(service) ? service : nil
  }

  /// Starts `spec` as the service `name` (one running under that name is stopped first).
  func start(_ name: String, identity: String, spec: CommandSpec, processes: ProcessRunner, grace: Double)
    -> Result<Service, ServiceError>
  {
    if services[name] != nil { stop(name, grace: grace) }
    let file = "service-" + String(name.unicodeScalars.map { Self.safe($0) ? Character($0) : "_" }.prefix(80)) + ".log"
    let log: (fd: Int32, path: String)
    switch SpillFolder.shared.create(file, reserving: 0, within: Int.max) {
    case .success(let made): log = made
    case .failure(let error): return .failure(ServiceError("cannot make its log file: \(error.message)"))
    }
    var pid: pid_t = 0, pidfd: Int32 = -1
    // Reaped only here: a second Ctrl-C's sweep of strays leaves it to `stopAll`.
    let problem = ProcessRunner.waitedFor.withLock { waited in
      let problem = processes.spawn(spec, stdout: log.fd, stderr: log.fd, pid: &pid, pidfd: &pidfd)
      if problem == nil { waited.insert(pid) }
      return problem
    }
    close(log.fd)
    if let problem { return .failure(ServiceError(problem)) }
    let service = Service(name: name, identity: identity, pid: pid, pidfd: pidfd, log: log.path)
    services[name] = service
    loop?.inbox.interruptWait()  // a wait that began before it watches its exit from now on
    return .success(service)
  }

  /// Stops the service `name`: TERM to its group, KILL after `grace` seconds; false if none ran.
  @discardableResult
  public func stop(_ name: String, grace: Double) -> Bool {
    guard let service = services.removeValue(forKey: name) else { return false }
    end(service, grace: grace)
    return true
  }

  /// Stops every service (the run is over); their names.
  @discardableResult
  public func stopAll(grace: Double) -> [String] {
    let names = services.keys.sorted()
    let all = services.values
    services = [:]
    for service in all where service.status == nil && Self.isChild(service.pid) {
      kill(-service.pid, SIGTERM)
      kill(-service.pid, SIGCONT)
    }
    let deadline = MonotonicClock.seconds() + max(0, grace)
    for service in all { end(service, grace: deadline - MonotonicClock.seconds()) }
    return names
  }

  /// `service` ended, and its operation's failure says so: it is not among those `takeEnded` gives.
  func forget(_ service: Service) { ended.removeAll { $0 === service } }

  /// The services that ended by themselves since the last call.
  public func takeEnded() -> [Service] {
    defer { ended = [] }
    return ended
  }

  /// The last `bytes` of a service's log, for a message.
  public static func tail(of log: String, bytes: Int = 2000) -> String {
    let fd = open(log, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)
    guard fd >= 0 else { return "" }
    defer { close(fd) }
    let size = lseek(fd, 0, SEEK_END)
    guard size > 0 else { return "" }
    let start = max(0, Int(size) - bytes)
    var buffer = [UInt8](repeating: 0, count: Int(size) - start)
    let n = pread(fd, &buffer, buffer.count, off_t(start))
    return String(decoding: buffer.prefix(max(0, n)), as: UTF8.self)
  }

  // MARK: Ends

  /// Whether `service` still runs; if it ended, it is reaped and forgotten.
  private func notEnded(_ service: Service) -> Bool {
    guard service.status == nil else { return false }
    var code: Int32 = 0
    guard cs_exited(service.pid, 0, &code, nil) == 1 || !Self.isChild(service.pid) else { return true }
    // What it left in its group: ours until the leader is reaped.
    if Self.isChild(service.pid) { kill(-service.pid, SIGKILL) }
    reap(service)
    if services[service.name] === service {
      services[service.name] = nil
      ended.append(service)
    }
    return false
  }

  /// TERM, KILL after `grace` (its group: the id is ours until its leader is reaped), reaped.
  private func end(_ service: Service, grace: Double) {
    guard service.status == nil else { return }
    guard Self.isChild(service.pid) else { return reap(service) }
    kill(-service.pid, SIGTERM)
    kill(-service.pid, SIGCONT)  // a paused one must see the TERM
    var code: Int32 = 0
    let deadline = MonotonicClock.seconds() + max(0, grace)
    while cs_exited(service.pid, 0, &code, nil) == 0 && Self.isChild(service.pid) {
      let left = deadline - MonotonicClock.seconds()
      if left <= 0 { break }
      if service.pidfd >= 0 {
        var fd = pollfd(fd: service.pidfd, events: Int16(POLLIN), revents: 0)
        _ = cs_poll(&fd, 1, min(left, 0.1))
      } else {
        usleep(10_000)
      }
    }
    if Self.isChild(service.pid) { kill(-service.pid, SIGKILL) }  // the rest of its group, or itself
    reap(service)
  }

  /// Reaps the leader (KILLed or exited: it ends at once) and keeps its status (-1: unknown).
  private func reap(_ service: Service) {
    var status: Int32 = 0
    var code: Int32 = -1
    let deadline = MonotonicClock.seconds() + 5
    while true {
      let got = waitpid(service.pid, &status, WNOHANG)
      if got == service.pid {
        code = status & 0x7f == 0 ? (status >> 8) & 0xff : 128 + (status & 0x7f)
        break
      }
      if got < 0 && errno != EINTR { break }  // not a child any more: someone reaped it
      if MonotonicClock.seconds() > deadline { break }
      usleep(1_000)
    }
    _ = ProcessRunner.waitedFor.withLock { $0.remove(service.pid) }
    service.status = code
    if service.pidfd >= 0 { close(service.pidfd) }
  }

  /// Whether `pid` is still an unreaped child of this process (its ids are ours).
  private static func isChild(_ pid: pid_t) -> Bool {
    var info = siginfo_t()
    return waitid(P_PID, id_t(pid), &info, WEXITED | WNOHANG | WNOWAIT) == 0
  }

  /// Whether `c` may stand in a log file's name as it is.
  private static func safe(_ c: Unicode.Scalar) -> Bool {
    ("a"..."z").contains(c) || ("A"..."Z").contains(c) || ("0"..."9").contains(c) || c == "-" || c == "_"
  }

  // MARK: DescriptorSource: exits seen while the loop waits

  public func watch(_ fds: inout [pollfd]) -> Double? {
    for service in services.values where service.pidfd >= 0 && service.status == nil {
      fds.append(pollfd(fd: service.pidfd, events: Int16(POLLIN), revents: 0))
    }
    // Without pidfds, a look every second.
    return services.values.contains { $0.pidfd < 0 && $0.status == nil } ? 1 : nil
  }

  public func handle(_ fds: [pollfd], from first: Int) {
    guard !services.isEmpty else { return }
    let seen = fds[min(first, fds.count)...].contains { $0.revents != 0 }
    guard seen || services.values.contains(where: { $0.pidfd < 0 }) else { return }
    var found = false
    for service in Array(services.values) where !notEnded(service) { found = true }
    if found, let loop { loop.inbox.post(.completion(token: notice, answer: nil)) }
  }
}

/// Why a service could not start.
public struct ServiceError: Error, CustomStringConvertible {
  public let description: String
  init(_ description: String) { self.description = description }
}
