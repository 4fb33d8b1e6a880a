// SignalWatcher: turns SIGINT/SIGTERM into inbox items instead of killing the process.
import Dispatch
import Foundation

/// Catches SIGINT, SIGTERM and SIGHUP (a closed terminal) for as long as it lives. Each one is posted to the inbox as
/// `.signal`; `immediately` runs first, off the scheduler's thread (used to interrupt a
/// runaway Lua loop, which would otherwise never let the scheduler see the inbox).
public final class SignalWatcher: @unchecked Sendable {
  private let queue = DispatchQueue(label: "taskrun.signals")
  private var sources: [DispatchSourceSignal] = []
  private var count = 0

  public init(inbox: Inbox, signals: [Int32] = [SIGINT, SIGTERM, SIGHUP],
              immediately: @escaping @Sendable (_ signal: Int32, _ count: Int) -> Void = { _, _ in }) {
    for number in signals {
      signal(number, SIG_IGN)
      let source = DispatchSource.makeSignalSource(signal: number, queue: queue)
      source.setEventHandler { [unowned self] in
        count += 1
        immediately(number, count)
        inbox.post(.signal(number))
      }
      source.resume()
      sources.append(source)
    }
  }

  deinit {
    for source in sources { source.cancel() }
  }
}
