// QualityOfService: GCD's QoS classes as a command's CPU and I/O niceness.

/// How much of the machine an operation's commands get, as GCD's quality-of-service classes
/// mean it (more CPU and disk time for work the user waits on): niceness raised by
/// `niceDelta` (`setpriority`; 0 leaves taskrun's) and an I/O class and level (`ioprio_set`).
/// Lowering a priority needs no privilege; raising one above taskrun's own would, so the two
/// highest classes keep taskrun's niceness and differ in their I/O level.
public enum QualityOfService: String, Sendable, CaseIterable {
  case userInteractive = "user_interactive"
  case userInitiated = "user_initiated"
  case utility
  case background

  /// How much higher the command's niceness is than taskrun's (capped at 19).
  public var niceDelta: Int32 {
    switch self {
    case .userInteractive, .userInitiated: 0
    case .utility: 5
    case .background: 19
    }
  }

  /// The value for `ioprio_set`: class << 13 | level (best effort is class 2, levels 0 to 7,
  /// 0 the highest; idle is class 3: disk time only when no one else wants it).
  public var ioPriority: Int32 {
    switch self {
    case .userInteractive: 2 << 13 | 0
    case .userInitiated: 2 << 13 | 2
    case .utility: 2 << 13 | 5
    case .background: 3 << 13
    }
  }
}
