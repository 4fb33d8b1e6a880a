// SlurmStep: inside an allocation (taskrun run by sbatch or salloc), each command is a job
// step: srun, started and reaped by the local process runner, its output over srun's pipes.
import Glibc

/// The `step` launcher: `srun --exact` per command, in the allocation taskrun runs in.
public final class SlurmStepExecutor: CommandExecutor {
  let processes: ProcessRunner
  let placement: SlurmPlacement
  /// The job name of every step of this run (`scancel --name` finds them).
  public let tag: String

  public init(processes: ProcessRunner, placement: SlurmPlacement, tag: String) {
    (self.processes, self.placement, self.tag) = (processes, placement, tag)
  }

  /// One command on the node: in a session of its own with stdin from /dev/null, as taskrun
  /// runs a local command; TERM (or the USR1 srun forwards) stops it as taskrun stops a local
  /// one: TERM to its group, KILL after the grace. slurmstepd passes USR1 to every process of
  /// the step, so the command starts with USR1 ignored; the shell's own notices ("Killed")
  /// are not the command's output. A stop that comes before the command is running is kept
  /// and carried out once it is (and reaches it before `setsid` made its group). A program
  /// that is not there, or a folder that is not, is reported as the local runner reports it
  /// (Slurm would run in /tmp).
  static let wrapper = """
    [ -n "$TASKRUN_CWD" ] && { cd "$TASKRUN_CWD" 2>/dev/null || { echo "cwd '$TASKRUN_CWD': no such directory" >&2; exit 127; }; }
    command -v "$1" >/dev/null 2>&1 || { echo "$1: command not found" >&2; exit 127; }
    stopping=
    trap 'stopping=1' TERM INT USR1
    exec 3>&2 2>/dev/null
    ( trap '' USR1; exec setsid "$@" < /dev/null 2>&3 3>&- ) &
    child=$!
    killer=
    stop() {
      kill -TERM -"$child" 2>/dev/null || kill -TERM "$child" 2>/dev/null
      [ -n "$killer" ] || { sh -c 'sleep "$1" & s=$!; trap "kill \\$s; exit 0" TERM; wait $s; kill -KILL -"$2" 2>/dev/null || kill -KILL "$2" 2>/dev/null' killer "${TASKRUN_GRACE:-2}" "$child" & killer=$!; }
    }
    trap stop TERM INT USR1
    [ -n "$stopping" ] && stop
    while :; do wait "$child"; rc=$?; kill -0 "$child" 2>/dev/null || break; done
    [ -n "$killer" ] && kill "$killer" 2>/dev/null
    exit "$rc"
    """

  /// srun's argv for `spec`: the step, then the wrapper, then the command's own argv.
  public func stepArguments(_ spec: CommandSpec) -> [String] {
    ["srun", "-v", "--exact", "--ntasks=1", "--nodes=1", "--job-name=\(tag)"] + placement.options
      + Slurm.niceOptions(spec.qos) + ["/bin/sh", "-c", Self.wrapper, "taskrun-job"] + spec.argv
  }

  public func start(_ spec: CommandSpec, token: CommandToken) {
    var step = CommandSpec(.argv(stepArguments(spec)), environment: spec.environment)
    step.qos = nil  // srun itself runs as taskrun does; the step gets --nice
    // srun starts here, the command in TASKRUN_CWD there (the filesystem is shared).
    if let directory = spec.directory { step.environment["TASKRUN_CWD"] = directory }
    processes.start(step, token: token)
  }

  /// srun itself dies on TERM without passing it on (the command would never see it):
  /// USR1 is what it forwards, and the wrapper turns it into TERM for the command's group.
  public func signal(token: CommandToken, _ signal: Int32) {
    if signal == SIGTERM {
      processes.signal(token: token, SIGUSR1, group: false)
    } else {
      processes.signal(token: token, signal)
    }
  }

  /// srun's and slurmstepd's own lines are not the command's output.
  public func shown(_ text: String, stream: OutputChannel) -> String {
    guard stream == .stderr, text.contains("srun: ") || text.contains("slurmstepd") else { return text }
    return text.split(separator: "\n", omittingEmptySubsequences: false).dropLast()
      .filter { !Self.isSlurmLine($0) }.map { $0 + "\n" }.joined()
  }

  /// Without Slurm's lines; a step Slurm ended (cancelled from outside, a time limit, out
  /// of memory) fails with Slurm's reason, not with the signal that ended it, even when
  /// slurmstepd's line was lost (srun's own account says it), and even when srun exits 0
  /// because Slurm ended the step before srun heard from its task.
  public func finished(_ result: CommandResult) -> CommandResult {
    var result = result
    let original = result.stderr
    let stderr = shown(original, stream: .stderr)
    if stderr.utf8.count != result.stderrBytes.count { result.stderrBytes = Array(stderr.utf8) }
    guard result.reason == nil else { return result }
    let account = SrunAccount(original)
    guard result.status != 0 || account.endedBySlurm else { return result }
    result.reason = Self.slurmReason(original) ?? account.reason(jobState: Slurm.jobState)
    if result.reason != nil && result.status == 0 { result.status = 1 }
    return result
  }

  /// Why Slurm ended a step, from slurmstepd's line ("*** STEP 4.0 ON vm CANCELLED AT … ***").
  static func slurmReason(_ stderr: String) -> String? {
    for line in stderr.split(separator: "\n") where line.contains("***") {
      guard let match = line.firstMatch(of: /\*\*\* (STEP|JOB) (\S+) ON (\S+) CANCELLED AT \S+( DUE TO (.*?))? \*\*\*/)
      else { continue }
      let what = "\(match.1 == "STEP" ? "step" : "job") \(match.2) on \(match.3)"
      switch match.5 {
      case "TIME LIMIT"?: return "killed by Slurm's time limit (\(what))"
      case let cause?: return "cancelled by Slurm (\(what), \(cause.lowercased()))"
      case nil: return "cancelled in Slurm (\(what))"
      }
    }
    if stderr.contains("oom-kill") || stderr.contains("Out Of Memory") { return "out of memory (Slurm)" }
    return nil
  }

  static func isSlurmLine<S: StringProtocol>(_ line: S) -> Bool {
    line.hasPrefix("srun: ") || line.hasPrefix("slurmstepd")
  }

  /// Every step of the run, found by its name and cancelled (the local srun processes end
  /// with taskrun; a step whose srun is gone would run on), and waited for until it has left
  /// Slurm's table (at most 10 s): once taskrun has exited, `squeue` shows none of its steps
  /// and their CPUs are free for the next run in the allocation.
  public func endAll() {
    processes.endDescendants()
    guard let job = getenv("SLURM_JOB_ID").map({ String(cString: $0) }) else { return }
    Slurm.cancelSteps(named: tag, inJob: job)
    Slurm.awaitSteps(named: tag, inJob: job, within: 10)
  }
}
