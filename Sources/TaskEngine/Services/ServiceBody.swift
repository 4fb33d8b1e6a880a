// ServiceBody: a `service = true` operation: starts (or keeps) its command and succeeds once the service is ready.
import FoundationEssentials

/// The body of a service operation. Its command is the keeper's, not the operation's: the
/// operation succeeds when the service is ready (its `ready` condition holds, or at once
/// without one) and its dependents start then, while the service goes on running. It fails
/// if the service ends before it is ready; a cancel or timeout before then stops it.
public final class ServiceBody: OperationBody {
  public let spec: CommandSpec
  let ready: (any OperationCondition)?
  let keeper: ServiceKeeper
  private var timer: TimerID?
  /// Seconds between two looks at the readiness condition.
  static let readyInterval = 0.1

  public init(_ spec: CommandSpec, ready: (any OperationCondition)?, keeper: ServiceKeeper) {
    (self.spec, self.ready, self.keeper) = (spec, ready, keeper)
  }

  public var summary: String { "service: " + spec.display }
  public var sandbox: SandboxGrant? { spec.sandbox }
  public var identity: [OperationRecord.Part] { CommandBody(spec).identity }

  /// Up to date, it is kept only while it still runs what it ran (else it starts again).
  public func mayBeReused(_ operation: OperationNode) -> Bool {
    keeper.service(operation.name, identity: RunMemory.identityDigest(operation)) != nil
  }

  public func start(_ operation: OperationNode, scheduler: Scheduler) {
    keeper.attach(to: scheduler)  // its end is seen while the run goes on
    keeper.stop(operation.name, grace: scheduler.killGrace)  // the one it replaces, first
    guard let ready else { return launch(operation, scheduler) }
    // `ready` must not hold yet: what answered would be another process (its port is taken).
    ready.evaluate(for: operation, scheduler: scheduler) { [weak self, weak operation] result in
      guard let self, let operation, operation.state == .executing, !operation.isFinished else { return }
      guard result != .satisfied else {
        return scheduler.finish(
          operation, .failed,
          error: "'\(ready.name)' holds before the service started: another process answers there: \(spec.display)",
          kind: .command)
      }
      launch(operation, scheduler)
    }
  }

  private func launch(_ operation: OperationNode, _ scheduler: Scheduler) {
    let identity = RunMemory.identityDigest(operation)
    switch keeper.start(
      operation.name, identity: identity, spec: spec, processes: scheduler.processes,
      grace: scheduler.killGrace)
    {
    case .failure(let error):
      scheduler.finish(operation, .failed, error: "service could not start: \(error): \(spec.display)", kind: .command)
    case .success(let service):
      awaitReady(operation, service, scheduler)
    }
  }

  private func awaitReady(_ operation: OperationNode, _ service: ServiceKeeper.Service, _ scheduler: Scheduler) {
    guard operation.state == .executing, !operation.isFinished else { return }
    guard keeper.isRunning(service) else {
      keeper.forget(service)  // this failure says it ended: not again as a service that ended
      let tail = ServiceKeeper.tail(of: service.log).split(separator: "\n").suffix(20)
      return scheduler.finish(
        operation, .failed,
        error: "service \(service.ending) before it was ready: \(spec.display)"
          + tail.map { "\n" + TerminalText.outputLine($0) }.joined(), kind: .command)
    }
    guard let ready else { return succeed(operation, service, scheduler) }
    ready.evaluate(for: operation, scheduler: scheduler) { [weak self, weak operation] result in
      guard let self, let operation, operation.state == .executing, !operation.isFinished else { return }
      if result == .satisfied { return self.succeed(operation, service, scheduler) }
      self.timer = scheduler.after(Self.readyInterval) { [weak self, weak operation] in
        guard let self, let operation else { return }
        self.timer = nil
        self.awaitReady(operation, service, scheduler)
      }
    }
  }

  private func succeed(_ operation: OperationNode, _ service: ServiceKeeper.Service, _ scheduler: Scheduler) {
    // What answered may be another process (its port was taken): a service that ended is not ready.
    guard keeper.isRunning(service) else { return awaitReady(operation, service, scheduler) }
    operation.why = "service ready (pid \(service.pid); its output: \(service.log))"
    scheduler.finish(operation, .succeeded)
  }

  public func interrupt(_ operation: OperationNode, scheduler: Scheduler, reason: String) {
    scheduler.cancelTimer(timer)
    timer = nil
    keeper.stop(operation.name, grace: scheduler.killGrace)
    if operation.timedOut {
      scheduler.finish(operation, .failed, error: operation.error ?? "timed out before the service was ready")
    } else {
      scheduler.finish(operation, .cancelled)
    }
  }
}
