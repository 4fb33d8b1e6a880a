// ShellSignals: spawn attributes that start a program as a shell would, signal-wise.
import Glibc

/// Calls `body` with posix_spawn attributes that give the program every signal at its default
/// and none blocked, as a shell (or slurmstepd) starts it: not what the test process blocks or
/// ignores, which a program would otherwise inherit (and sh cannot trap a signal ignored when
/// it started).
public func withShellSignals<R>(_ body: (inout posix_spawnattr_t) throws -> R) rethrows -> R {
  var attributes = posix_spawnattr_t()
  posix_spawnattr_init(&attributes)
  defer { posix_spawnattr_destroy(&attributes) }
  var all = sigset_t(), none = sigset_t()
  sigfillset(&all)
  sigemptyset(&none)
  posix_spawnattr_setsigdefault(&attributes, &all)
  posix_spawnattr_setsigmask(&attributes, &none)
  posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK))
  return try body(&attributes)
}
