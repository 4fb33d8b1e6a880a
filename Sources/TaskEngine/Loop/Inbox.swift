// Inbox: the one door through which other threads hand work to the scheduler's thread.
import CSpawn
import FoundationEssentials
import Glibc
import Synchronization

/// Something that happened off the scheduler's thread: a process exited, output arrived, a signal.
public enum InboxItem: Sendable {
  case processOutput(token: CommandToken, stream: OutputChannel, text: String)
  /// Whole lines as the command wrote them, not decoded: what no reporter and no progress
  /// pattern reads goes only to the operation's kept tail, decoded if a report needs it.
  case processBytes(token: CommandToken, stream: OutputChannel, bytes: [UInt8])
  /// A stretch of a line a command overwrote with a carriage return (a progress meter): it
  /// feeds `progress =` patterns but is not output of its own.
  case processOverwrite(token: CommandToken, text: String)
  case processExited(token: CommandToken, result: CommandResult)
  /// Where a command running elsewhere is: queued in a cluster, or running on a node.
  case commandState(token: CommandToken, state: RemoteState)
  case signal(Int32)
  /// Work done off the scheduler's thread finished with this answer (nil: no error).
  case completion(token: Int, answer: String?)
  case wake
}

/// Descriptors the scheduler's thread watches while it waits for the inbox: the process
/// runner's pipes and pidfds, and a run's control socket (`DescriptorWatcher`). What it finds
/// there it posts to the inbox from that thread.
public protocol DescriptorSource: AnyObject {
  /// Appends the descriptors to watch; returns the longest wait it allows, in seconds (nil: any).
  func watch(_ fds: inout [pollfd]) -> Double?
  /// Handles what `poll` found in its own descriptors, from `fds[first]` on, as many as it
  /// appended (also after a timeout: deadlines of its own). It must not act on the run:
  /// it posts to the inbox, and the loop acts on its turn.
  func handle(_ fds: [pollfd], from first: Int)
}

/// Several watchers as one: each is given its own part of the descriptors.
final class DescriptorSources: DescriptorSource {
  private let parts: [any DescriptorSource]
  private var firsts: [Int]

  init(_ parts: [any DescriptorSource]) {
    self.parts = parts.flatMap { ($0 as? DescriptorSources)?.parts ?? [$0] }
    firsts = Array(repeating: 0, count: self.parts.count)
  }

  func watch(_ fds: inout [pollfd]) -> Double? {
    var limit: Double?
    for (i, part) in parts.enumerated() {
      firsts[i] = fds.count
      if let allowed = part.watch(&fds) { limit = min(limit ?? allowed, allowed) }
    }
    return limit
  }

  func handle(_ fds: [pollfd], from first: Int) {
    for (i, part) in parts.enumerated() { part.handle(fds, from: firsts[i]) }
  }
}

/// A thread-safe FIFO; only the scheduler's thread takes from it. While that thread waits for
/// it, it also watches a `DescriptorSource` (the commands' pipes and exits), so a command's
/// output and exit reach the scheduler without a hand-off between threads.
public final class Inbox: @unchecked Sendable {
  private let lock = Lock()
  private var items: [InboxItem] = []
  /// Guarded by lock: the scheduler's thread is in `poll`, so a post must wake it.
  private var waiting = false
  /// A pipe whose read end is part of every wait: a post from another thread writes a byte.
  private var wake: [Int32] = [-1, -1]
  /// Scheduler's thread only: the process runner, and another watcher (the control socket).
  weak var source: (any DescriptorSource)?
  /// Held strongly (it lives as long as the run: read at every poll, a weak reference cost
  /// the runtime's slow path each time).
  @exclusivity(unchecked) var watcher: (any DescriptorSource)?
  @exclusivity(unchecked) private var lastWatch = 0.0
  /// What the last `poll` watched (scheduler's thread only), kept to be filled again.
  @exclusivity(unchecked) private var fds: [pollfd] = []
  /// Interrupts posted so far: the scheduler compares it with those it has handled at every
  /// point where something could start, without waiting for its turn to drain the inbox.
  public let signalsPosted = Atomic<Int>(0)
  /// Interrupts the scheduler has handled: one that stays unhandled means the scheduler's
  /// thread is stuck where Lua cannot be interrupted (a finalizer runs without hooks).
  public let signalsHandled = Atomic<Int>(0)

  public init() {
    if cs_pipe(&wake) == 0 { _ = fcntl(wake[1], F_SETFL, O_WRONLY | O_NONBLOCK) }
  }

  deinit { for fd in wake where fd >= 0 { close(fd) } }

  /// An interrupt (SIGINT, SIGTERM, SIGHUP): counted first, then queued to wake the loop.
  public func postSignal(_ signal: Int32) {
    signalsPosted.add(1, ordering: .sequentiallyConsistent)
    post(.signal(signal))
  }

  public func post(_ item: InboxItem) {
    lock.lock()
    items.append(item)
    let sleeping = waiting
    waiting = false
    lock.unlock()
    if sleeping { wakeWaiter() }
  }

  /// Ends the scheduler's current wait (a descriptor to watch changed) without posting.
  func interruptWait() {
    lock.lock()
    let sleeping = waiting
    waiting = false
    lock.unlock()
    if sleeping { wakeWaiter() }
  }

  private func wakeWaiter() {
    var byte: UInt8 = 1
    _ = write(wake[1], &byte, 1)  // a full pipe is already a wake-up
  }

  public var isEmpty: Bool {
    lock.lock()
    defer { lock.unlock() }
    return items.isEmpty
  }

  /// Takes everything posted so far without blocking.
  public func drain() -> [InboxItem] {
    lock.lock()
    defer { lock.unlock() }
    if items.isEmpty { return [] }
    let taken = items
    items.removeAll(keepingCapacity: true)
    return taken
  }

  /// Drops signals posted so far (an interactive session starts a new evaluation), keeping
  /// everything else in order.
  public func discardSignals() {
    lock.lock()
    defer { lock.unlock() }
    items.removeAll { if case .signal = $0 { true } else { false } }
  }

  /// Blocks until something is posted or `timeout` seconds pass (nil: no limit), watching the
  /// source's descriptors meanwhile. Wakes at least daily: a far deadline (a timeout of
  /// years) is then a plain wait.
  public func waitForItems(timeout: Double?) {
    let deadline = timeout.map { MonotonicClock.seconds() + min(Limits.wait($0), 86_400) }
    while true {
      lock.lock()
      if !items.isEmpty { lock.unlock(); return }
      waiting = true
      lock.unlock()
      let polled = poll(seconds: deadline.map { max(0, $0 - MonotonicClock.seconds()) } ?? 86_400)
      lock.lock()
      waiting = false  // before the source posts what it found: those posts need no wake-up
      lock.unlock()
      if polled { handlePolled() }
      if let deadline, MonotonicClock.seconds() >= deadline { return }
    }
  }

  /// Looks at the source's descriptors without waiting, at most every `interval` seconds: a
  /// scheduler that always has work still sees its commands' output and exits.
  func watchIfDue(every interval: Double = 0.005) {
    guard source != nil || watcher != nil, MonotonicClock.seconds() - lastWatch >= interval else { return }
    if poll(seconds: 0) { handlePolled() }
  }

  /// Whether a watcher other than the process runner is set (the loop then looks at it while
  /// it is busy, as it does at commands).
  var hasWatcher: Bool { watcher != nil }

  /// Where the watcher's descriptors begin in `fds` (after the source's).
  @exclusivity(unchecked) private var watcherFirst = 0

  private func handlePolled() {
    source?.handle(fds, from: 1)
    watcher?.handle(fds, from: watcherFirst)
  }

  /// One `poll` over the wake pipe and the source's descriptors, into `fds` (false: nothing
  /// to look at).
  private func poll(seconds: Double) -> Bool {
    lastWatch = MonotonicClock.seconds()
    fds.removeAll(keepingCapacity: true)
    fds.append(pollfd(fd: wake[0], events: Int16(POLLIN), revents: 0))
    var limit = seconds
    if let source, let allowed = source.watch(&fds) { limit = min(limit, allowed) }
    watcherFirst = fds.count
    if let watcher, let allowed = watcher.watch(&fds) { limit = min(limit, allowed) }
    if fds.count == 1 && limit == 0 { return false }
    _ = cs_poll(&fds, UInt(fds.count), limit)
    if fds[0].revents != 0 {
      var bytes: (UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0)
      _ = withUnsafeMutableBytes(of: &bytes) { read(wake[0], $0.baseAddress, $0.count) }
    }
    return true
  }
}
