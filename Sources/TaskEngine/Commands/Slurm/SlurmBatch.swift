// SlurmBatch: outside an allocation, each command is a batch job (sbatch); a wrapper on the
// node writes its output and status into the job's folder on the shared filesystem, and one
// poller reads those files and asks squeue once per tick about all jobs of the run.
import Dispatch
import FoundationEssentials
import Glibc

/// The `batch` launcher. Its state lives on its own serial queue; it reports to the inbox.
public final class SlurmBatchExecutor: CommandExecutor, @unchecked Sendable {
  let inbox: Inbox
  let placement: SlurmPlacement
  public let tag: String
  /// The run's folder on the shared filesystem: one folder per command (its token).
  public let folder: URL
  /// Seconds between polls.
  let interval: Double
  /// How long a job squeue says ended may take to show its status file (shared filesystems
  /// cache attributes), and how many polls a job may be missing from squeue before it is lost.
  let statusWait: Double
  let missingPolls: Int
  private let queue = DispatchQueue(label: "taskrun.slurm")
  private var jobs: [CommandToken: Job] = [:]
  private var ticking = false
  /// Jobs of an earlier taskrun followed by this one (`--resume`): asked about by id (their
  /// name is the earlier run's), cancelled by id at the end, their folders removed.
  private var attached: Set<String> = []
  /// The folders of the earlier runs those jobs came from: removed when this run ends.
  private var earlierFolders: Set<String> = []

  final class Job {
    let token: CommandToken
    let folder: URL
    var id: String?
    var state = "PENDING"
    var reason = ""
    var stopping = false
    var endedAt: Date?
    /// When sbatch was asked, and whether the job was reported running.
    let submitted = Date()
    var running = false
    var missing = 0
    var read: [OutputChannel: UInt64] = [.stdout: 0, .stderr: 0]
    var lines: [OutputChannel: OutputLines] = [:]
    var output: [OutputChannel: Data] = [.stdout: Data(), .stderr: Data()]
    init(token: CommandToken, folder: URL) { (self.token, self.folder) = (token, folder) }
  }

  public init(
    inbox: Inbox, placement: SlurmPlacement, tag: String, folder: URL,
    interval: Double = 0.5, statusWait: Double = 60, missingPolls: Int = 3
  ) {
    (self.inbox, self.placement, self.tag, self.folder) = (inbox, placement, tag, folder)
    (self.interval, self.statusWait, self.missingPolls) = (interval, statusWait, missingPolls)
  }

  /// One attempt on the node: `$1` is its folder. `started` when it runs, the command's
  /// output in `stdout`/`stderr`, and `status` last (written whole, then renamed).
  static let wrapper = """
    #!/bin/sh
    d=$1; shift
    echo "$SLURM_JOB_ID $(hostname)" > "$d/started"
    finish() { echo "$1" > "$d/status.tmp" && mv "$d/status.tmp" "$d/status"; exit "$1"; }
    if [ -n "$TASKRUN_CWD" ] && ! cd "$TASKRUN_CWD" 2>/dev/null; then
      echo "cwd '$TASKRUN_CWD': no such directory" >> "$d/stderr"; finish 127
    fi
    command -v "$1" >/dev/null 2>&1 || { echo "$1: command not found" >> "$d/stderr"; finish 127; }
    setsid "$@" < /dev/null >> "$d/stdout" 2>> "$d/stderr" &
    child=$!
    killer=
    stop() {
      kill -TERM -"$child" 2>/dev/null
      [ -n "$killer" ] || { sh -c 'sleep "$1" & s=$!; trap "kill \\$s; exit 0" TERM; wait $s; kill -KILL -"$2" 2>/dev/null' killer "${TASKRUN_GRACE:-2}" "$child" & killer=$!; }
    }
    trap stop TERM INT USR1
    # A pause (taskrun's SIGSTOP, sent as USR2: the command is in a session of its own, which
    # Slurm's signals to the job do not reach) and its resume.
    trap 'kill -STOP -"$child" 2>/dev/null' USR2
    trap 'kill -CONT -"$child" 2>/dev/null' CONT
    while :; do wait "$child"; rc=$?; kill -0 "$child" 2>/dev/null || break; done
    [ -n "$killer" ] && kill "$killer" 2>/dev/null
    finish "$rc"
    """

  public func start(_ spec: CommandSpec, token: CommandToken) {
    queue.async { [self] in
      let job = Job(token: token, folder: folder.appendingPathComponent("\(token)"))
      jobs[token] = job
      do {
        try FileManager.default.createDirectory(at: job.folder, withIntermediateDirectories: true)
        let script = folder.appendingPathComponent("taskrun-job.sh")
        if !FileManager.default.fileExists(atPath: script.path) {
          try Self.wrapper.write(to: script, atomically: true, encoding: .utf8)
        }
        for name in ["stdout", "stderr"] {
          _ = FileManager.default.createFile(atPath: job.folder.appendingPathComponent(name).path, contents: nil)
        }
        var environment = spec.environment
        environment["TASKRUN_CWD"] = spec.directory ?? FileManager.default.currentDirectoryPath
        let argv =
          [
            "sbatch", "--parsable", "--job-name=\(tag)", "--no-requeue",
            "--output=\(job.folder.path)/slurm.out", "--chdir=\(folder.path)"
          ] + placement.options + Slurm.niceOptions(spec.qos)
          + [script.path, job.folder.path] + spec.argv
        let (status, output) = Slurm.capture(argv, environment: environment)
        guard status == 0,
          let id = output.split(separator: ";").first.map(String.init)?
            .trimmed(), !id.isEmpty, id.allSatisfy(\.isNumber)
        else {
          return end(
            job,
            CommandResult(
              status: 127, stdout: "", stderr: "",
              reason: "could not start (sbatch: \(output.trimmed()))"))
        }
        job.id = id
        inbox.post(
          .commandState(
            token: token,
            state: RemoteState(executor: "slurm", job: id, queued: true, reason: "submitted", folder: job.folder.path)))
        if job.stopping { _ = Slurm.run(["scancel", "--quiet", id], within: 10) }
      } catch {
        return end(job, CommandResult(status: 127, stdout: "", stderr: "", reason: "could not start (\(error))"))
      }
      tickSoon()
    }
  }

  /// Follows a job a killed taskrun submitted: its files are read from the start (its output
  /// so far is replayed) and its state asked by id; one that ended meanwhile is collected
  /// from its status file.
  public func attach(job id: String, folder: String, token: CommandToken) -> Bool {
    // Only a job folder of an earlier run under this run's base folder (`<base>/taskrun.*/N`):
    // the folder comes from the store, and the earlier run's folder is removed at the end.
    let job = URL(fileURLWithPath: folder).standardizedFileURL
    let run = job.deletingLastPathComponent()
    guard !id.isEmpty, id.allSatisfy(\.isNumber), folder.hasPrefix("/"), !folder.contains("/../"),
      job.lastPathComponent.allSatisfy(\.isNumber), run.lastPathComponent.hasPrefix("taskrun."),
      run.deletingLastPathComponent().path == self.folder.deletingLastPathComponent().standardizedFileURL.path
    else { return false }
    queue.async { [self] in
      let job = Job(token: token, folder: job)
      job.id = id
      jobs[token] = job
      attached.insert(id)
      earlierFolders.insert(job.folder.deletingLastPathComponent().path)
      inbox.post(
        .commandState(
          token: token,
          state: RemoteState(executor: "slurm", job: id, queued: true, reason: "re-attached", folder: folder)))
      tickSoon()
    }
    return true
  }

  /// TERM: scancel (TERM to the job; the wrapper stops the command's group with the grace);
  /// KILL: KILL to every process of the job, then the job.
  public func signal(token: CommandToken, _ signal: Int32) {
    queue.async { [self] in
      guard let job = jobs[token] else { return }
      if signal == SIGSTOP || signal == SIGCONT {  // a pause: the wrapper stops its command's group
        guard let id = job.id else { return }
        _ = Slurm.run(
          ["scancel", "--quiet", "--batch", "--signal=\(signal == SIGSTOP ? "USR2" : "CONT")", id], within: 10)
        return
      }
      job.stopping = true
      guard let id = job.id else { return }  // scancelled once sbatch answers
      if signal == SIGKILL { _ = Slurm.run(["scancel", "--quiet", "--signal=KILL", "--full", id], within: 10) }
      _ = Slurm.run(["scancel", "--quiet", id], within: 10)
    }
  }

  public func shown(_ text: String, stream: OutputChannel) -> String { text }
  public func finished(_ result: CommandResult) -> CommandResult { result }

  /// Every job of the run is cancelled by name, and the run's folder goes.
  public func endAll() {
    Slurm.cancel(name: tag)
    queue.sync {
      if !attached.isEmpty { _ = Slurm.run(["scancel", "--quiet"] + attached.sorted(), within: 10) }
      for folder in earlierFolders { try? FileManager.default.removeItem(atPath: folder) }
    }
    try? FileManager.default.removeItem(at: folder)
    // .taskrun/slurm and .taskrun, if this left them empty
    let parent = folder.deletingLastPathComponent()
    rmdir(parent.path)
    if parent.lastPathComponent == "slurm" { rmdir(parent.deletingLastPathComponent().path) }
  }

  // MARK: Polling

  private func tickSoon() {
    guard !ticking else { return }
    ticking = true
    queue.asyncAfter(deadline: .now() + interval) { [weak self] in self?.tick() }
  }

  /// Reads every job's files, then one squeue for all of them; ends what has ended.
  private func tick() {
    ticking = false
    guard !jobs.isEmpty else { return }
    var states = Slurm.states(name: tag)
    let followed = jobs.values.compactMap { $0.id }.filter(attached.contains)
    if !followed.isEmpty { states.merge(Slurm.states(ids: followed)) { a, _ in a } }
    for job in Array(jobs.values) {
      readOutput(job)
      let known = job.id.flatMap { states[$0] }
      // Started, by its own mark: even a job that started and ended between two polls, or
      // that squeue has not shown running yet, counts its time from there.
      if !job.running, let mark = startMark(job) { announceRunning(job, mark: mark, node: known?.node ?? "") }
      if let status = readStatus(job) {
        // Killed by a signal we did not send: Slurm's state says why (scancel from outside,
        // its time limit, memory), once squeue has it (a few seconds at most).
        if status > 128, !job.stopping, let id = job.id {
          if let known, Slurm.ended(known.state), known.state != "FAILED", known.state != "COMPLETED" {
            end(job, result(job, status: status, reason: Slurm.reason(state: known.state, id: id, stopping: false)))
            continue
          }
          job.endedAt = job.endedAt ?? Date()
          if known.map({ !Slurm.ended($0.state) }) ?? true, Date().timeIntervalSince(job.endedAt!) < 5 { continue }
        }
        end(job, result(job, status: status, reason: nil))
        continue
      }
      guard let id = job.id else { continue }
      if let (state, reason, node) = known {
        if state != job.state || reason != job.reason, state == "PENDING", !job.running {
          inbox.post(
            .commandState(
              token: job.token,
              state: RemoteState(
                executor: "slurm", job: id, queued: true, reason: reason)))
        } else if state == "RUNNING", !job.running {
          announceRunning(job, mark: startMark(job), node: node)
        }
        job.state = state
        job.reason = reason
        job.missing = 0
        if Slurm.ended(state) {
          job.endedAt = job.endedAt ?? Date()
          // A job that never ran (cancelled while pending) writes nothing; one that ran
          // writes its status within the filesystem's delay.
          let ran = FileManager.default.fileExists(atPath: job.folder.appendingPathComponent("started").path)
          if !ran || Date().timeIntervalSince(job.endedAt!) > statusWait {
            end(
              job,
              result(job, status: 128 + SIGKILL, reason: Slurm.reason(state: state, id: id, stopping: job.stopping)))
          }
        }
      } else {
        job.missing += 1
        if job.missing >= missingPolls {
          end(
            job,
            result(job, status: 128 + SIGKILL, reason: "lost: Slurm no longer knows job \(id) and it left no status"))
        }
      }
    }
    tickSoon()
  }

  /// Reports the job running, once, with how long it has run by its start mark (the
  /// `started` file's time; until its `status` file's time when it has ended), so its
  /// operation's duration starts when the job did, not when a poll saw it.
  private func announceRunning(_ job: Job, mark: (time: Double, node: String)?, node: String) {
    guard !job.running, let id = job.id else { return }
    job.running = true
    var ran: Double?
    if let mark {
      let end = Self.modified(job.folder.appendingPathComponent("status").path) ?? Date().timeIntervalSince1970
      // Both times are the shared filesystem's; against this host's clock, never more than
      // the time since submission.
      ran = min(max(0, end - mark.time), Date().timeIntervalSince(job.submitted))
    }
    let shown = node.isEmpty ? mark?.node ?? "" : node
    inbox.post(
      .commandState(
        token: job.token,
        state: RemoteState(
          executor: "slurm", job: id, queued: false, node: shown.isEmpty ? nil : shown, runningFor: ran)))
  }

  /// The wrapper's `started` file: when it was written, and the node's name it holds.
  private func startMark(_ job: Job) -> (time: Double, node: String)? {
    let path = job.folder.appendingPathComponent("started").path
    guard let time = Self.modified(path) else { return nil }
    let words = ((try? String(contentsOfFile: path, encoding: .utf8)) ?? "").split(whereSeparator: \.isWhitespace)
    return (time, words.count > 1 ? String(words[1]) : "")
  }

  /// A file's modification time in seconds since 1970, or nil when it is not there.
  static func modified(_ path: String) -> Double? {
    var info = stat()
    guard stat(path, &info) == 0 else { return nil }
    return Double(info.st_mtim.tv_sec) + Double(info.st_mtim.tv_nsec) / 1e9
  }

  private func readOutput(_ job: Job) {
    for channel in [OutputChannel.stdout, .stderr] {
      let fd = open(job.folder.appendingPathComponent(channel.rawValue).path, O_RDONLY | O_CLOEXEC)
      guard fd >= 0 else { continue }
      defer { close(fd) }
      guard lseek(fd, off_t(job.read[channel] ?? 0), SEEK_SET) >= 0,
        let bytes = readAll(fd), !bytes.isEmpty
      else { continue }
      let data = Data(bytes)
      job.read[channel, default: 0] += UInt64(data.count)
      job.output[channel, default: Data()].append(data)
      if job.output[channel]!.count > 2 * ProcessRunner.tailBytes {
        job.output[channel] = job.output[channel]!.suffix(ProcessRunner.tailBytes)
      }
      job.lines[channel, default: OutputLines()].add(
        data, lines: { inbox.post(.processOutput(token: job.token, stream: channel, text: $0)) },
        stretch: { inbox.post(.processOverwrite(token: job.token, text: $0)) })
    }
  }

  private func readStatus(_ job: Job) -> Int32? {
    guard let text = try? String(contentsOf: job.folder.appendingPathComponent("status"), encoding: .utf8) else {
      return nil
    }
    readOutput(job)  // what the command wrote before its status
    return Int32(text.trimmed())
  }

  private func result(_ job: Job, status: Int32, reason: String?) -> CommandResult {
    for channel in [OutputChannel.stdout, .stderr] {
      if let rest = job.lines[channel]?.finish() {
        inbox.post(.processOutput(token: job.token, stream: channel, text: rest))
      }
    }
    return CommandResult(
      status: status, stdoutBytes: Array(job.output[.stdout] ?? Data()),
      stderrBytes: Array(job.output[.stderr] ?? Data()), reason: reason)
  }

  private func end(_ job: Job, _ result: CommandResult) {
    jobs[job.token] = nil
    if let id = job.id { attached.remove(id) }
    inbox.post(.processExited(token: job.token, result: result))
  }
}
