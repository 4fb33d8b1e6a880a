// Conditions: what must hold just before an operation starts (the Advanced NSOperations model).
import FoundationEssentials

/// What a condition decided.
public enum ConditionResult: Sendable, Equatable {
  case satisfied
  /// The operation fails with the condition's name and this message.
  case failed(String)
  /// The operation is skipped (not failed) with this message.
  case skipped(String)
}

/// Evaluated after all of an operation's dependencies finished, just before it would start.
/// A condition may first produce a dependency (the "login before saving" pattern): it runs,
/// and only then is the condition evaluated.
public protocol OperationCondition: AnyObject {
  var name: String { get }
  /// An operation that must run first, or nil. Called once per operation.
  func dependency(for op: OperationNode, scheduler: Scheduler) -> OperationNode?
  /// Decides, now or later, by calling `completion` once (on the scheduler's thread).
  func evaluate(for op: OperationNode, scheduler: Scheduler, completion: @escaping (ConditionResult) -> Void)
}

extension OperationCondition {
  public func dependency(for op: OperationNode, scheduler: Scheduler) -> OperationNode? { nil }
}

/// A condition made of closures (the Lua host and the built-ins use it).
public final class BlockCondition: OperationCondition {
  public let name: String
  let produce: ((OperationNode, Scheduler) -> OperationNode?)?
  let decide: (OperationNode, Scheduler, @escaping (ConditionResult) -> Void) -> Void

  public init(
    name: String,
    dependency: ((OperationNode, Scheduler) -> OperationNode?)? = nil,
    evaluate: @escaping (OperationNode, Scheduler, @escaping (ConditionResult) -> Void) -> Void
  ) {
    self.name = name
    self.produce = dependency
    self.decide = evaluate
  }

  public func dependency(for op: OperationNode, scheduler: Scheduler) -> OperationNode? {
    produce?(op, scheduler)
  }

  public func evaluate(for op: OperationNode, scheduler: Scheduler, completion: @escaping (ConditionResult) -> Void) {
    decide(op, scheduler, completion)
  }

  /// `exists(path)`: the file or directory is there.
  public static func exists(_ path: String) -> BlockCondition {
    BlockCondition(name: "exists '\(path)'") { _, _, done in
      done(FileManager.default.fileExists(atPath: path) ? .satisfied : .failed("'\(path)' does not exist"))
    }
  }
}

/// `negate(c)`: satisfied when `c` is not (its dependency still runs); fails when `c` holds.
public final class NegatedCondition: OperationCondition {
  let inner: any OperationCondition
  public init(_ inner: any OperationCondition) { self.inner = inner }
  public var name: String { "not \(inner.name)" }
  public func dependency(for op: OperationNode, scheduler: Scheduler) -> OperationNode? {
    inner.dependency(for: op, scheduler: scheduler)
  }
  public func evaluate(for op: OperationNode, scheduler: Scheduler, completion: @escaping (ConditionResult) -> Void) {
    inner.evaluate(for: op, scheduler: scheduler) { result in
      completion(result == .satisfied ? .failed("'\(self.inner.name)' holds") : .satisfied)
    }
  }
}

/// `silent(c)`: evaluates `c` without producing its dependency ("check, but don't prompt").
public final class SilentCondition: OperationCondition {
  let inner: any OperationCondition
  public init(_ inner: any OperationCondition) { self.inner = inner }
  public var name: String { inner.name }
  public func evaluate(for op: OperationNode, scheduler: Scheduler, completion: @escaping (ConditionResult) -> Void) {
    inner.evaluate(for: op, scheduler: scheduler, completion: completion)
  }
}

/// `all(c, ...)` (every one holds; the first that does not decides) and `any(c, ...)`
/// (one holds). Evaluated in order, stopping as soon as the answer is known.
public final class CompoundCondition: OperationCondition {
  public enum Mode: Sendable { case all, any }
  let mode: Mode
  let parts: [any OperationCondition]
  public init(_ mode: Mode, _ parts: [any OperationCondition]) {
    self.mode = mode
    self.parts = parts
  }
  public var name: String {
    (mode == .all ? "all(" : "any(") + parts.map(\.name).joined(separator: ", ") + ")"
  }
  /// Only a single dependency can be produced; the first part that has one provides it.
  public func dependency(for op: OperationNode, scheduler: Scheduler) -> OperationNode? {
    for part in parts { if let dependency = part.dependency(for: op, scheduler: scheduler) { return dependency } }
    return nil
  }
  public func evaluate(for op: OperationNode, scheduler: Scheduler, completion: @escaping (ConditionResult) -> Void) {
    step(0, op, scheduler, failures: [], completion)
  }
  private func step(
    _ index: Int, _ op: OperationNode, _ scheduler: Scheduler, failures: [String],
    _ completion: @escaping (ConditionResult) -> Void
  ) {
    guard index < parts.count else {
      return completion(mode == .all ? .satisfied : .failed(failures.joined(separator: "; ")))
    }
    parts[index].evaluate(for: op, scheduler: scheduler) { result in
      switch (self.mode, result) {
      case (.all, .satisfied): self.step(index + 1, op, scheduler, failures: failures, completion)
      case (.all, _): completion(result)
      case (.any, .satisfied): completion(.satisfied)
      case (.any, .failed(let message)), (.any, .skipped(let message)):
        self.step(index + 1, op, scheduler, failures: failures + ["\(self.parts[index].name): \(message)"], completion)
      }
    }
  }
}
