// RunMemory: the scheduler's part that remembers: up-to-date checks, outputs after a run, attempts and history.
import Glibc

/// What the run store knows, and what this run adds to it. The scheduler asks it whether an
/// operation with declarations (`Freshness`) must run, tells it each attempt's end, and reads
/// the history it loaded (durations for the ETA and the schedule). Everything here happens on
/// the scheduler's thread.
public final class RunMemory {
  /// Nil for a memory that records nothing (a dry run's, or one whose store could not open:
  /// every declared operation then runs, with the reason).
  public let store: RunStore?
  /// This run's id in the store (0: not recorded).
  public private(set) var run: Int64 = 0
  /// `-B`/`--always`: every operation runs, whatever the store says (its successes are still recorded).
  public var always = false
  /// A cycle of `taskrun -w`: every attempt is recorded with what it ran (its identity), and
  /// after the first, the previous cycle is resumed and operations that declare nothing are
  /// kept unless what they run changed or what they depend on ran again.
  public var watching = false
  /// `-w`: the run the next cycle resumes (this one's if its script loaded, else the one it
  /// resumed itself).
  public var continuedRun: Int64?
  /// Whether checks may write (false for `-n` and `why`).
  public let records: Bool
  /// The last success of each operation, by name, in brief; and the records decoded so far.
  @exclusivity(unchecked) private var index: [String: RunStore.Summary]
  @exclusivity(unchecked) private var decoded: [String: OperationRecord] = [:]
  /// Recent successful durations of each operation, newest first (at most `keptDurations`).
  @exclusivity(unchecked) public let durations: [String: [Double]]
  /// The operations whose latest attempt did not succeed (for "last run failed").
  @exclusivity(unchecked) private var failures: [String: (run: Int64, outcome: String)]
  /// Typical durations as the ETA's weights and the order of ready work (nil: no history).
  @exclusivity(unchecked) private(set) var history: History?
  static let keptDurations = 20
  /// Durations below this are not kept as history: the order and the ETA of work that short
  /// gain nothing from it, and writing it cost more than running a `true`.
  static let timedDuration = 0.01
  /// `--resume`: the run resumed, and what succeeded in it (by name).
  public private(set) var resumed: (run: Int64, succeeded: [String: AttemptRecord])?
  /// The host's text for an operation's result, kept for `--resume` (nil: not kept).
  public var resultText: ((OperationNode) -> String?)?
  let look = FileLook()
  /// The folder relative paths are resolved in (taskrun's working folder when the run began).
  let folder: String

  /// What an operation's fingerprint was made of when it was checked, for its record after it
  /// succeeds.
  private struct Checked {
    var identity: [OperationRecord.Part]
    var inputs: [FileRecord]
    var discovered: [FileRecord]
    var upstream: [OperationRecord.Upstream]
  }
  /// Each running operation's plain outputs as they were before it started, to remove what a
  /// failure changed.
  @exclusivity(unchecked) private var outputsBefore: [ObjectIdentifier: [String: FileRecord]] = [:]
  /// Real paths a failure never removes: the workflow script (set by the command line).
  public var protectedPaths: Set<String> = []
  @exclusivity(unchecked) private var checked: [ObjectIdentifier: Checked] = [:]
  /// This run: what each operation with declarations produced (its dependents' fingerprints
  /// include it): the hash, and the files when they were looked at (nil: taken from the store).
  @exclusivity(unchecked) private var produced:
    [ObjectIdentifier: (digest: Digest, files: [OperationRecord.Produced]?)] = [:]
  /// Bytes reused by every quick check.
  @exclusivity(unchecked) private var scratch = ByteWriter()
  /// `--resume`: batch jobs a killed run left running, by operation (taken by the first attempt).
  private var jobs: [String: (id: String, folder: String)] = [:]

  public init(store: RunStore?, records: Bool) {
    self.store = store
    self.records = records && store != nil
    index = store?.summaries() ?? [:]
    durations = store?.durations() ?? [:]
    failures = store?.failures() ?? [:]
    defer { history = History(self) }
    var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
    folder = getcwd(&buffer, buffer.count).map { String(cString: $0) } ?? "."
  }

  /// A memory of the same store for the next run in this process (a cycle of `taskrun -w`):
  /// what this one recorded is committed, and read back as the next one's past.
  public func next() -> RunMemory {
    commit()
    return RunMemory(store: store, records: records)
  }

  /// Seconds to add to the scheduler's clock for wall-clock time (what the store keeps).
  private var wallOffset = 0.0

  /// Starts recording a run (its command line) in the store; `time` is the wall clock's now,
  /// `clock` the scheduler's.
  public func begin(command: String, targets: [String] = [], at time: Double, clock: Double) {
    wallOffset = time - clock
    guard records, let store else { return }
    run = (try? store.beginRun(command: command, targets: targets, at: time)) ?? 0
  }

  /// `--resume [RUN]`: what succeeded in that run (default: the last one before this) is
  /// reused where it is still up to date. Returns the run resumed, or why there is none.
  public func resume(run wanted: Int64?) -> Result<Int64, StoreError> {
    guard let store else { return .failure(StoreError("there is no run store to resume from")) }
    guard let id = wanted ?? store.lastRun(before: run == 0 ? nil : run) else {
      return .failure(StoreError("no run is recorded in this folder yet"))
    }
    guard store.runs(limit: 1_000_000).contains(where: { $0.id == id }) else {
      return .failure(StoreError("run \(id) is not in the store (see taskrun history)"))
    }
    var succeeded: [String: AttemptRecord] = [:]
    for (_, attempt) in store.attempts(run: id) {
      switch attempt.outcome {
      case "succeeded":
        succeeded[attempt.operation] = attempt
        jobs[attempt.operation] = nil
      case "running":
        // A batch job submitted and not seen to end: the run was killed while it ran.
        if let text = attempt.job, let space = text.firstIndex(of: " ") {
          jobs[attempt.operation] = (String(text[..<space]), String(text[text.index(after: space)...]))
        }
      default:
        jobs[attempt.operation] = nil
      }
    }
    resumed = (id, succeeded)
    return .success(id)
  }

  /// Ends the run's record: its outcome, counts and summary; keeps the newest `keeping` runs.
  public func end(
    outcome: String, counts: [String: Int], summary: RunSummary? = nil, keeping: Int, at time: Double
  ) {
    guard records, let store, run > 0 else { return }
    store.endRun(run, outcome: outcome, counts: counts, summary: summary, at: time)
    store.prune(keeping: keeping)
  }

  public func commit() { if records { store?.commit() } }
  /// Commits now (the scheduler's clock reads `time`).
  func commit(at time: Double) {
    lastCommit = time
    commit()
  }
  var wantsCommit: Bool { store?.hasManyUncommitted ?? false }
  var hasUncommitted: Bool { store?.hasUncommitted ?? false }
  /// Seconds between commits while a run goes on (what a `kill -9` may lose at most).
  static let commitInterval = 0.05
  var lastCommit = -Double.infinity
  /// A timer will commit what is left.
  var commitScheduled = false

  // MARK: Deciding

  /// What the check decided.
  public enum Verdict: Equatable {
    /// It runs, for this reason.
    case run(String)
    case reuse(Reuse, String)
  }

  /// Whether `op` must run; its reason is kept on it (`op.why`). Only operations that declare
  /// something, or any operation of a resumed run, are checked. The stored properties here are
  /// `@exclusivity(unchecked)` as the scheduler's are (see OperationNode): one thread, whole
  /// loads and stores; the checks were a tenth of a no-op check's instructions.
  public func check(_ op: OperationNode) -> Verdict {
    let verdict = decide(op)
    switch verdict {
    case .run(let reason): op.why = reason
    case .reuse(let reuse, let reason):
      op.why = reason
      op.reuse = reuse
    }
    return verdict
  }

  private func decide(_ op: OperationNode) -> Verdict {
    if watching, let resumed, resumed.succeeded[op.name] != nil {
      return decideInCycle(op, after: resumed.run)
    }
    if let resumed, let attempt = resumed.succeeded[op.name] {
      let identity = Self.identityDigest(op)
      if let recorded = attempt.identity, recorded != identity {
        return .run("changed since run \(resumed.run) (\(op.freshness == nil ? "its body" : "what it runs"))")
      }
      if op.freshness == nil || !op.freshness!.declaresFiles {
        if let fresh = op.freshness?.check, let stale = fresh(op) { return .run(stale) }
        return .reuse(.resumed(from: resumed.run), "succeeded in run \(resumed.run)")
      }
      let verdict = decideByFingerprint(op)
      guard case .reuse(_, let reason) = verdict else { return verdict }
      return .reuse(.resumed(from: resumed.run), reason)
    }
    guard let freshness = op.freshness else {
      return .run(
        resumed.map { r in
          lastOutcome(op.name).map { "\($0.outcome) in run \($0.run)" } ?? "did not run in run \(r.run)"
        } ?? "no inputs or outputs declared")
    }
    if always {
      _ = decideByFingerprint(op)  // what its record is made of after it succeeds
      return .run("-B: every operation runs")
    }
    if !freshness.declaresFiles {
      // Only `fresh`: it alone decides.
      if let stale = freshness.check?(op) { return .run(stale) }
      return .reuse(.upToDate(since: 0), "fresh() says it is up to date")
    }
    return decideByFingerprint(op)
  }

  /// In a cycle of `-w` after the first (`watching`, the previous cycle resumed): an operation
  /// that needs a service that started again runs; one that declares files is up to date by
  /// its fingerprint; one that does not is kept while what it runs is the same and none of its
  /// dependencies ran again in this cycle.
  private func decideInCycle(_ op: OperationNode, after previous: Int64) -> Verdict {
    // A service that started again is a new server: what needs it runs against it again.
    if let service = op.dependencies.first(where: { $0.body is ServiceBody && Self.ranAgain($0) }) {
      return .run("service \(service.name) started again")
    }
    if let freshness = op.freshness, freshness.declaresFiles { return decideByFingerprint(op) }
    if let recorded = resumed?.succeeded[op.name]?.identity, recorded != Self.identityDigest(op) {
      return .run("what it runs changed")
    }
    if let dependency = op.dependencies.first(where: Self.ranAgain) { return .run("\(dependency.name) ran again") }
    if let stale = op.freshness?.check?(op) { return .run(stale) }
    return .reuse(.upToDate(since: previous), "not affected by the change")
  }

  /// Whether `op` ran in this run (a group: whether one of its operations did).
  private static func ranAgain(_ op: OperationNode) -> Bool {
    guard op.outcome == .succeeded else { return false }
    if op.isGroup { return op.children.contains(where: ranAgain) }
    return op.reuse == nil
  }

  /// The files `op`'s depfile named at its last success (`-w` watches them).
  public func discoveredPaths(of op: OperationNode) -> [String] {
    guard op.freshness?.depfile != nil else { return [] }
    return last(op.name)?.discovered.map(\.path) ?? []
  }

  /// The record of an operation's last success, decoded once.
  private func last(_ name: String) -> OperationRecord? {
    if let known = decoded[name] { return known }
    guard index[name] != nil, let record = store?.record(of: name) else { return nil }
    decoded[name] = record
    return record
  }

  private func lastOutcome(_ name: String) -> (run: Int64, outcome: String)? { failures[name] }

  /// What an upstream operation produced, file by file (from the store when this run took
  /// it as up to date without looking).
  private func files(producedBy op: OperationNode) -> [OperationRecord.Produced] {
    guard let known = produced[ObjectIdentifier(op)] else { return [] }
    if let files = known.files { return files }
    let files = last(op.name)?.produced ?? []
    produced[ObjectIdentifier(op)] = (known.digest, files)
    return files
  }

  private func decideByFingerprint(_ op: OperationNode) -> Verdict {
    let freshness = op.freshness!
    let id = ObjectIdentifier(op)
    var identity: [OperationRecord.Part] = []
    identity.reserveCapacity(5)
    identity += op.body?.identity ?? []
    identity.append(.init("folder", folder))
    if let key = freshness.key { identity.append(.init("key", key)) }
    var upstream: [(name: String, digest: Digest)] = []
    for dependency in op.dependencies {
      if let made = produced[ObjectIdentifier(dependency)] { upstream.append((dependency.name, made.digest)) }
    }
    if upstream.count > 1 { upstream.sort { $0.name < $1.name } }
    // The quick check: the same stats as at its last success, nothing read or decoded.
    if let summary = index[op.name], let quick = summary.quick, freshness.depfile == nil, !always,
      let inputs = Globs.stats(freshness.inputs), let outputs = Globs.stats(freshness.outputs),
      OperationRecord.quickSignature(
        identity: identity, inputs: inputs, outputs: outputs, upstream: upstream, scratch: &scratch) == quick
    {
      if let stale = freshness.check?(op) { return .run(stale) }
      produced[id] = (summary.produced, nil)
      return .reuse(.upToDate(since: summary.run), "up to date since run " + String(summary.run))
    }
    let previous = last(op.name)
    guard let inputPaths = Globs.expand(freshness.inputs) else {
      return .run("its inputs name more than \(Globs.maxFiles) files")
    }
    let inputs = looked(inputPaths, previous: previous?.inputs)
    // A file that is there but cannot be read is no input one can vouch for: it runs.
    if let unreadable = inputs.first(where: { $0.size < 0 && access($0.path, F_OK) == 0 }) {
      return .run("input \(unreadable.path) cannot be read")
    }
    let discovered = looked((previous?.discovered ?? []).map(\.path), previous: previous?.discovered)
    var upstreamFiles: [OperationRecord.Upstream] = []
    for dependency in op.dependencies where produced[ObjectIdentifier(dependency)] != nil {
      upstreamFiles.append(.init(name: dependency.name, outputs: files(producedBy: dependency)))
    }
    upstreamFiles.sort { $0.name < $1.name }
    checked[id] = Checked(identity: identity, inputs: inputs, discovered: discovered, upstream: upstreamFiles)
    guard let previous else {
      if let outcome = lastOutcome(op.name) {
        return .run("last run failed (\(outcome.outcome) in run \(outcome.run))")
      }
      return .run("never ran")
    }
    let fingerprint = OperationRecord.fingerprint(
      identity: identity, inputs: inputs, discovered: discovered, upstream: upstream)
    if fingerprint != previous.fingerprint {
      return .run(
        Why.difference(
          before: previous, identity: identity, inputs: inputs, discovered: discovered, upstream: upstreamFiles)
          ?? "its fingerprint changed")
    }
    // The same inputs: its outputs must still be what it made.
    guard let outputPaths = Globs.expand(freshness.outputs) else {
      return .run("its outputs name more than \(Globs.maxFiles) files")
    }
    let before = Set(previous.outputs.map(\.path))
    for path in outputPaths where !before.contains(path) {
      return .run("output \(path) is new since run \(previous.run)")
    }
    var outputs: [FileRecord] = []
    for old in previous.outputs {
      guard let now = look.look(old.path, previous: old) else { return .run("output \(old.path) missing") }
      if now.digest != old.digest { return .run("output \(old.path) changed since run \(previous.run)") }
      outputs.append(now)
    }
    if let stale = freshness.check?(op) { return .run(stale) }
    produced[id] = (OperationRecord.producedDigest(previous.produced), previous.produced)
    if records, outputs != previous.outputs || inputs != previous.inputs || discovered != previous.discovered {
      // Touched but not changed (or written just before it was hashed): the new stats spare
      // the next run the hashing.
      var refreshed = previous
      (refreshed.outputs, refreshed.inputs, refreshed.discovered) = (outputs, inputs, discovered)
      store?.save(refreshed, of: op.name)
      decoded[op.name] = refreshed
    }
    return .reuse(.upToDate(since: previous.run), "up to date since run " + String(previous.run))
  }

  /// The files at `paths` now (a missing one has size -1), reusing trusted hashes of `previous`.
  private func looked(_ paths: [String], previous: [FileRecord]?) -> [FileRecord] {
    let previous = previous ?? []
    var byPath: [String: FileRecord] = [:]
    if previous.count > 4 {
      byPath.reserveCapacity(previous.count)
      for file in previous { byPath[file.path] = file }
    }
    return paths.map { path in
      let old = previous.count > 4 ? byPath[path] : previous.first { $0.path == path }
      return look.look(path, previous: old)
        ?? FileRecord(path: path, size: -1, mtime: 0, inode: 0, digest: .zero, trusted: false)
    }
  }

  /// A hash of what the operation's body runs (`--resume` compares it).
  static func identityDigest(_ op: OperationNode) -> String {
    var w = ByteWriter()
    for part in op.body?.identity ?? [] {
      w.string(part.label)
      w.string(part.text)
    }
    if let key = op.freshness?.key { w.string(key) }
    return FileLook.hash(w.bytes).short
  }

  // MARK: Recording

  /// A batch job was submitted for `op`: recorded at once, so that `--resume` after a
  /// `kill -9` follows the job instead of submitting another.
  func submitted(_ op: OperationNode, _ state: RemoteState) {
    guard records, let store, run > 0, let folder = state.folder else { return }
    var attempt = AttemptRecord(operation: op.name, attempt: op.attempt, outcome: "running", started: wallNow)
    attempt.job = state.job + " " + folder
    store.record(attempt, run: run)
    store.commit()
  }

  /// The job of a killed run to follow for `op` (once), if `--resume` found one.
  public func takeJob(of op: OperationNode) -> (id: String, folder: String)? {
    guard !jobs.isEmpty, op.attempt == 1 else { return nil }
    return jobs.removeValue(forKey: op.name)
  }

  private var wallNow: Double { Double(FileLook.wallNow()) / 1e9 }

  func ready(_ op: OperationNode, at time: Double) { op.readyStamp = time }

  /// An attempt starts: the stats of its plain outputs now (a failure removes what it changed).
  func starting(_ op: OperationNode) {
    guard let freshness = op.freshness, !freshness.outputs.isEmpty else { return }
    var before: [String: FileRecord] = [:]
    for path in freshness.outputs where !Globs.isPattern(path) {
      var info = stat()
      if lstat(path, &info) == 0 {
        before[path] = FileRecord(
          path: path, size: Int64(info.st_size), mtime: FileLook.nanoseconds(info.st_mtim),
          inode: UInt64(info.st_ino), digest: .zero, trusted: false)
      }
    }
    outputsBefore[ObjectIdentifier(op)] = before
  }

  /// A succeeded attempt's declared outputs that are missing: the operation fails with this
  /// message instead (nil: all there).
  func missingOutputs(_ op: OperationNode) -> String? {
    guard let freshness = op.freshness, !freshness.outputs.isEmpty else { return nil }
    var missing: [String] = []
    for pattern in freshness.outputs {
      if Globs.isPattern(pattern) {
        if Globs.expand([pattern])?.isEmpty ?? false { missing.append("no file matches output '\(pattern)'") }
      } else if access(pattern, F_OK) != 0 {
        missing.append("declared output '\(pattern)' was not made")
      }
    }
    return missing.isEmpty ? nil : missing.joined(separator: "; ")
  }

  /// An attempt ended. A success: its outputs are hashed (its dependents see them), its
  /// depfile read, and its record saved. A failure or cancel: the outputs it changed are
  /// removed (make's .DELETE_ON_ERROR). Every attempt that ran is recorded.
  func ended(_ op: OperationNode, _ outcome: Outcome, error: String?, at time: Double) {
    let id = ObjectIdentifier(op)
    if let freshness = op.freshness {
      if outcome == .succeeded {
        succeeded(op, freshness)
      } else if !freshness.outputs.isEmpty {
        removeChanged(op, freshness, before: outputsBefore[id] ?? [:])
      }
    }
    guard records, let store, run > 0 else { return }
    if outcome == .succeeded, op.freshness == nil, op.commandResult == nil, op.hostData == nil, !watching,
      failures.isEmpty || failures[op.name] == nil
    {
      // A Lua body that returned nothing, or a pure target: what it is, without an AttemptRecord
      // (10,000 no-op operations paid 35% more for one).
      let start = op.startTime ?? time
      let duration = time - (op.remoteStartTime ?? start)
      if duration >= Self.timedDuration { keep(duration, of: op.name) }
      return store.recordSuccess(
        of: op.name, attempt: op.attempt, started: start + wallOffset, duration: duration,
        queueWait: op.readyStamp.isNaN ? nil : max(0, start - op.readyStamp),
        run: run)
    }
    var attempt = AttemptRecord(
      operation: op.name, attempt: op.attempt, outcome: outcome.rawValue, started: (op.startTime ?? time) + wallOffset)
    attempt.error = outcome == .succeeded ? nil : error ?? op.error
    attempt.duration = op.startTime.map { time - (op.remoteStartTime ?? $0) }
    if !op.readyStamp.isNaN, let start = op.startTime { attempt.queueWait = max(0, start - op.readyStamp) }
    if let result = op.commandResult {
      attempt.exitStatus = Int(result.status)
      attempt.peakMemory = result.peakMemory
      attempt.cpuSeconds = result.cpuSeconds
    }
    if op.freshness != nil || resumed != nil || watching || op.body?.cheapIdentity == true {
      attempt.identity = Self.identityDigest(op)
    }
    if outcome == .succeeded {
      attempt.result = resultText?(op)
      // An operation shorter than 10 ms is not worth a weight or a place in the order of its
      // own (it weighs the median of the others).
      if let duration = attempt.duration, duration >= Self.timedDuration { keep(duration, of: op.name) }
    }
    attempt.why = op.why
    store.record(attempt, run: run)
    if outcome != .succeeded {
      failures[op.name] = (run, outcome.rawValue)
      store.noteFailure(of: op.name, run: run, outcome: outcome.rawValue)
    } else if failures.removeValue(forKey: op.name) != nil {
      store.noteFailure(of: op.name, run: run, outcome: nil)
    }
    if op.freshness != nil, outcome == .succeeded || op.isFinished { (checked[id], outputsBefore[id]) = (nil, nil) }
  }

  /// A new duration of `name`, for the next run: this run's weights and order were made from
  /// what was loaded, and keeping every new one here would grow with the run (a body that makes
  /// operations until the heap's cap is reached must not run taskrun out of memory).
  private func keep(_ duration: Double, of name: String) {
    store?.saveDurations([duration] + (durations[name] ?? []).prefix(Self.keptDurations - 1), of: name)
  }

  /// An operation `--resume` reused: recorded so that resuming this run reuses it too (an
  /// up-to-date one is found up to date again; 10,000 of them write nothing).
  func reused(_ op: OperationNode, at time: Double) {
    guard records, let store, run > 0, let reuse = op.reuse else { return }
    if case .upToDate = reuse, !watching { return }
    var attempt = AttemptRecord(operation: op.name, attempt: 0, outcome: "succeeded", started: time + wallOffset)
    attempt.identity = Self.identityDigest(op)
    if let old = resumed?.succeeded[op.name], resumed!.run > 0 { attempt.result = old.result }
    attempt.why = op.why
    store.record(attempt, run: run)
  }

  /// The result text `--resume` restores for `op` (nil: none was kept).
  public func restoredResult(_ op: OperationNode) -> String? {
    guard let reuse = op.reuse else { return nil }
    if case .upToDate = reuse, !watching { return nil }
    return resumed?.succeeded[op.name]?.result
  }

  private func succeeded(_ op: OperationNode, _ freshness: Freshness) {
    let id = ObjectIdentifier(op)
    let previous = last(op.name)
    let outputs = looked(Globs.expand(freshness.outputs) ?? [], previous: previous?.outputs).filter { $0.size >= 0 }
    let files = outputs.map { OperationRecord.Produced(path: $0.path, digest: $0.digest) }
    produced[id] = (OperationRecord.producedDigest(files), files)
    guard records, let store, let parts = checked[id], freshness.declaresFiles else { return }
    var discovered = parts.discovered
    if let depfile = freshness.depfile {
      var info = stat()
      if stat(depfile, &info) == 0, info.st_size <= Depfile.maxBytes, let text = Self.read(depfile) {
        discovered = looked(Array(Depfile.prerequisites(text).prefix(Globs.maxFiles)), previous: previous?.discovered)
      } else {
        discovered = []
      }
    }
    var record = OperationRecord()
    (record.run, record.identity, record.inputs) = (run, parts.identity, parts.inputs)
    (record.discovered, record.outputs, record.upstream) = (discovered, outputs, parts.upstream)
    // The inputs as they were before it ran: one changed meanwhile makes the next run run it.
    record.fingerprint = OperationRecord.fingerprint(
      identity: parts.identity, inputs: parts.inputs, discovered: discovered, upstream: record.upstreamDigests)
    store.save(record, of: op.name)
    decoded[op.name] = record
  }

  /// Removes the plain output files (not globs, not folders: what they match may be another
  /// operation's, or anyone's) whose stat the failed attempt changed; never the workflow
  /// script, never the run store.
  private func removeChanged(_ op: OperationNode, _ freshness: Freshness, before: [String: FileRecord]) {
    for path in freshness.outputs where !Globs.isPattern(path) {
      var info = stat()
      guard lstat(path, &info) == 0, info.st_mode & S_IFMT != S_IFDIR else { continue }
      if let old = before[path], old.sameStat(info) { continue }
      if path.split(separator: "/").contains(Substring(RunStore.folderName)) { continue }
      var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
      if let real = realpath(path, &buffer).map({ String(cString: $0) }), protectedPaths.contains(real) { continue }
      unlink(path)
    }
  }

  static func read(_ path: String) -> [UInt8]? {
    let fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)
    guard fd >= 0 else { return nil }
    defer { close(fd) }
    var bytes: [UInt8] = []
    var buffer = [UInt8](repeating: 0, count: 1 << 16)
    while bytes.count <= Depfile.maxBytes {
      let n = Glibc.read(fd, &buffer, buffer.count)
      if n < 0 && errno == EINTR { continue }
      if n <= 0 { break }
      bytes.append(contentsOf: buffer[0..<n])
    }
    return bytes
  }

  // MARK: History

  /// The median of an operation's recent successful durations (nil: none recorded).
  public func typicalDuration(of name: String) -> Double? {
    guard let list = durations[name], !list.isEmpty else { return nil }
    let sorted = list.sorted()
    return sorted.count % 2 == 1
      ? sorted[sorted.count / 2] : (sorted[sorted.count / 2 - 1] + sorted[sorted.count / 2]) / 2
  }

  /// The 90th percentile of its recent successful durations (nil: fewer than 3 recorded).
  public func slowDuration(of name: String) -> Double? {
    guard let list = durations[name], list.count >= 3 else { return nil }
    let sorted = list.sorted()
    return sorted[min(sorted.count - 1, Int((Double(sorted.count) * 0.9).rounded(.up)) - 1)]
  }
}
