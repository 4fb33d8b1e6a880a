// Environment: what taskrun reads of its surroundings at start: variables and processors.
import CSpawn
import Glibc

/// Reads one thing at a time. Foundation's `ProcessInfo` copies every variable into a
/// dictionary and reads several files for the processor count: a fifth of an empty
/// workflow's start-up.
public enum Environment {
  /// The variable `name`, or nil when it is not set (taskrun never sets variables of its own).
  public static func variable(_ name: String) -> String? {
    getenv(name).map { String(cString: $0) }
  }

  /// Processors this process may use (its CPU affinity, or a cgroup quota if smaller): the
  /// default for -j.
  public static var processorCount: Int { cs_processor_count() }
}
