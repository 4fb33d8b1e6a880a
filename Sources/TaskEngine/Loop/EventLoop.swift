// EventLoop: the scheduler's reactor: its clock and inbox, timers, and completions of work done off its thread.
import Dispatch
import FoundationEssentials
import HeapModule

/// A timer of an `EventLoop` (from `after`), for `cancel`. A type of its own, so a timer cannot
/// be passed where a command's `CommandToken` is expected.
public struct TimerID: Hashable, Sendable {
  let raw: Int
}

struct TimerEntry: Comparable {
  let deadline: Double
  let id: Int
  // Heap pops max first: the earliest deadline, then the earliest timer.
  static func < (a: TimerEntry, b: TimerEntry) -> Bool {
    a.deadline != b.deadline ? a.deadline > b.deadline : a.id > b.id
  }
}

/// Time, the inbox, timers and off-thread completions: reactor state only. What a timer or a
/// completion does is its closure's business; the scheduler decides when the loop waits.
/// Used from the scheduler's thread only; other threads reach it through the `inbox`.
public final class EventLoop {
  public let clock: any SchedulerClock
  public let inbox: Inbox
  @exclusivity(unchecked) private var timers = Heap<TimerEntry>()
  /// The action of each pending timer by id (a cancelled timer's entry stays in the heap).
  @exclusivity(unchecked) private var timerActions: [Int: () -> Void] = [:]
  @exclusivity(unchecked) private var lastTimer = 0
  /// What to call with the answer of work done off the thread (`perform`), by its number.
  @exclusivity(unchecked) private var completions: [Int: (String?) -> Void] = [:]
  @exclusivity(unchecked) private var lastCompletion = 0
  /// Registered services (`register(service:)`), which do not count as pending.
  @exclusivity(unchecked) private var services: [Int: (String?) -> Void] = [:]

  public init(clock: any SchedulerClock, inbox: Inbox = Inbox()) {
    self.clock = clock
    self.inbox = inbox
  }

  /// Calls `action` on the scheduler's thread after `seconds` (beyond `Limits.maxSeconds`: never).
  @discardableResult
  public func after(_ seconds: Double, _ action: @escaping () -> Void) -> TimerID {
    lastTimer += 1
    timers.insert(TimerEntry(deadline: clock.now + Limits.wait(seconds), id: lastTimer))
    timerActions[lastTimer] = action
    return TimerID(raw: lastTimer)
  }

  /// The timer's action will not run (nil, or a timer that fired already: nothing).
  public func cancel(_ timer: TimerID?) {
    if let timer { timerActions[timer.raw] = nil }
  }

  /// Runs blocking `work` off the scheduler's thread (on `queue`: a serial one serializes,
  /// as prompts must be); `then` gets its answer on the scheduler's thread.
  public func perform(
    on queue: DispatchQueue = .global(), _ work: @escaping @Sendable () -> String?,
    then: @escaping (String?) -> Void
  ) {
    lastCompletion += 1
    let number = lastCompletion
    completions[number] = then
    let inbox = self.inbox
    queue.async { inbox.post(.completion(token: number, answer: work())) }
  }

  /// A handler for messages another part posts to the inbox (`.completion` with the number
  /// returned), on the scheduler's thread, for as long as the loop lives; it does not keep
  /// the loop busy (a run with nothing else to do still ends).
  public func register(service: @escaping (String?) -> Void) -> Int {
    lastCompletion += 1
    services[lastCompletion] = service
    return lastCompletion
  }

  /// Watches `watcher`'s descriptors whenever the loop looks at the inbox, beside those
  /// watched already (a run's control socket and `-w`'s file watcher).
  public func watch(_ watcher: any DescriptorSource) {
    guard let present = inbox.watcher else { return inbox.watcher = watcher }
    inbox.watcher = DescriptorSources([present, watcher])
  }

  /// Hands the answer of `perform`'s work `number` (an inbox `.completion`) to its `then`,
  /// or a message to a registered service.
  func complete(_ number: Int, answer: String?) {
    if let then = completions.removeValue(forKey: number) { return then(answer) }
    services[number]?(answer)
  }

  /// Runs the actions of the timers whose deadline has come, earliest first. Whether any ran.
  func fireDue() -> Bool {
    var fired = false
    let now = clock.now
    while let next = timers.max, next.deadline <= now {
      timers.removeMax()
      if let action = timerActions.removeValue(forKey: next.id) {
        action()
        fired = true
      }
    }
    return fired
  }

  /// The deadline of the earliest pending timer (cancelled ones are dropped), if any.
  var nextDeadline: Double? {
    while let next = timers.max, timerActions[next.id] == nil { timers.removeMax() }
    return timers.max?.deadline
  }

  /// No timer, no off-thread work and nothing in the inbox: only a command can still wake it.
  var isIdle: Bool { timerActions.isEmpty && completions.isEmpty && inbox.isEmpty }

  /// Waits until the inbox gets something or `deadline` (nil: none) passes.
  func idle(until deadline: Double?) { clock.idle(until: deadline, inbox: inbox) }
}
