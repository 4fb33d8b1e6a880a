// SandboxOptions: `--sandbox[=lua]` and `--sandbox-allow` for the subcommands that load a script (repl, graph), declared once.
import ArgumentParser
import TaskEngine

/// The sandbox's options as `taskrun repl` and `taskrun graph` take them (a run declares its
/// own in `RunOption`): the same meaning as a run's, applied by `apply`.
struct SandboxOptions: ParsableArguments {
  @Flag(
    help:
      "Confine the script as a run's --sandbox does: its Lua code, and every command it runs (the workflow folder: the script's, else the current one); --sandbox=lua confines the Lua code only."
  )
  var sandbox = false

  @Flag(name: .customLong("sandbox-lua"), help: .hidden)
  var sandboxLua = false

  @Option(help: ArgumentHelp("With --sandbox: what operations may widen (read, write, network).", valueName: "kinds"))
  var sandboxAllow: SandboxAllowance?

  func validate() throws {
    if sandboxAllow != nil && !sandbox { throw ValidationError("--sandbox-allow needs --sandbox") }
  }

  /// Whether either is asked for.
  var asked: Bool { sandbox || sandboxLua }

  /// Applies them to `session` before `script` loads; a kernel that cannot confine is a usage
  /// error (exit 2), said here.
  func apply(to session: Session, script: String) throws {
    guard asked else { return }
    do {
      try RunOptions.sandbox(
        session, sandbox ? .commands : .lua, script: script, allowing: sandboxAllow?.kinds ?? [])
    } catch {
      TerminalText.writeMessage("taskrun: " + RunOptions.cannotConfine(error))
      throw Taskrun.Exit(.usage)
    }
  }
}
