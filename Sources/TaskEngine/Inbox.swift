// Inbox: the one door through which other threads hand work to the scheduler's thread.
import Foundation
import Synchronization

/// Something that happened off the scheduler's thread: a process exited, output arrived, a signal.
public enum InboxItem: Sendable {
  case processOutput(token: Int, stream: OutputChannel, text: String)
  /// A stretch of a line a command overwrote with a carriage return (a progress meter): it
  /// feeds `progress =` patterns but is not output of its own.
  case processOverwrite(token: Int, text: String)
  case processExited(token: Int, result: CommandResult)
  /// Where a command running elsewhere is: queued in a cluster, or running on a node.
  case commandState(token: Int, state: RemoteState)
  case signal(Int32)
  /// Work done off the scheduler's thread finished with this answer (nil: no error).
  case completion(token: Int, answer: String?)
  case wake
}

/// A thread-safe FIFO; only the scheduler's thread takes from it.
public final class Inbox: @unchecked Sendable {
  private let condition = NSCondition()
  private var items: [InboxItem] = []
  /// Interrupts posted so far: the scheduler compares it with those it has handled at every
  /// point where something could start, without waiting for its turn to drain the inbox.
  public let signalsPosted = Atomic<Int>(0)
  /// Interrupts the scheduler has handled: one that stays unhandled means the scheduler's
  /// thread is stuck where Lua cannot be interrupted (a finalizer runs without hooks).
  public let signalsHandled = Atomic<Int>(0)

  public init() {}

  /// An interrupt (SIGINT, SIGTERM, SIGHUP): counted first, then queued to wake the loop.
  public func postSignal(_ signal: Int32) {
    signalsPosted.add(1, ordering: .sequentiallyConsistent)
    post(.signal(signal))
  }

  public func post(_ item: InboxItem) {
    condition.lock()
    if case .processOutput(_, _, let text) = item { backlog += text.utf8.count }
    items.append(item)
    condition.signal()
    condition.unlock()
  }

  public var isEmpty: Bool {
    condition.lock()
    defer { condition.unlock() }
    return items.isEmpty
  }

  /// Bytes of command output posted and not yet taken (for the process runner's backpressure).
  public var outputBacklog: Int {
    condition.lock()
    defer { condition.unlock() }
    return backlog
  }
  private var backlog = 0

  /// Takes everything posted so far without blocking.
  public func drain() -> [InboxItem] {
    condition.lock()
    defer { condition.unlock() }
    backlog = 0
    let taken = items
    items.removeAll(keepingCapacity: true)
    return taken
  }

  /// Drops signals posted so far (an interactive session starts a new evaluation), keeping
  /// everything else in order.
  public func discardSignals() {
    condition.lock()
    defer { condition.unlock() }
    items.removeAll { if case .signal = $0 { true } else { false } }
  }

  /// Blocks until something is posted or `timeout` seconds pass (nil: no limit).
  public func waitForItems(timeout: Double?) {
    condition.lock()
    defer { condition.unlock() }
    if !items.isEmpty { return }
    if let timeout {
      // Wakes at least daily: a far deadline (a timeout of years) is then a plain wait.
      _ = condition.wait(until: Date(timeIntervalSinceNow: min(Limits.wait(timeout), 86_400)))
    } else {
      while items.isEmpty { condition.wait() }
    }
  }
}
