// RunStore: the workflow folder's `.taskrun/SCRIPT.db` (SQLite, WAL): runs, attempts, summaries, last successes; its lock.
import CSQLite
import Glibc

/// One attempt of one operation, as the store keeps it.
public struct AttemptRecord: Sendable {
  public var operation: String
  public var attempt: Int
  public var outcome: String
  public var error: String?
  public var started: Double
  public var duration: Double?
  public var queueWait: Double?
  public var exitStatus: Int?
  public var peakMemory: Int64?
  public var cpuSeconds: Double?
  /// A hash of what its body runs (command text, env, cwd; a Lua function's code).
  public var identity: String?
  /// Its result as Lua-readable text, where it could be kept (`--resume` restores it).
  public var result: String?
  /// A cluster job's id, while and after it ran there (`--resume` re-attaches it).
  public var job: String?
  /// Why it ran (or did not), as the run store's check said.
  public var why: String?

  public init(operation: String, attempt: Int, outcome: String, started: Double) {
    (self.operation, self.attempt, self.outcome, self.started) = (operation, attempt, outcome, started)
  }
}

/// A run as the store keeps it.
public struct RunRecord: Sendable {
  public var id: Int64
  public var started: Double
  public var ended: Double?
  public var command: String
  public var outcome: String?
  /// `succeeded` (that ran), `failed`, `cancelled`, `skipped`, `up_to_date`, `resumed`: the
  /// ones the run's end recorded (none for a run that never ended).
  public var counts: [String: Int]
  /// The targets its command line named (empty: the script's default; nil: not recorded,
  /// a run of a schema 2 store).
  public var targets: [String]? = nil
}

/// The run store of one workflow folder. A run holds the folder's lock for as long as it is
/// open; readers (`-n`, `why`, `history`) open it without the lock, read only.
public final class RunStore {
  /// The store's folder (`<workflow>/.taskrun`).
  public let folder: String
  let db: SQLiteDatabase
  /// The lock file's descriptor (-1: opened to read only).
  private let lockDescriptor: Int32
  /// Writes since the last commit (a transaction is open while it is above 0).
  private var uncommitted = 0
  private var upsertRecord: SQLiteStatement?
  private var selectRecord: SQLiteStatement?
  private var upsertDurations: SQLiteStatement?

  /// How many runs are kept by default (`--keep-runs`).
  public static let defaultKeptRuns = 100
  static let schemaVersion = "3"
  public static let folderName = ".taskrun"

  /// Why a run could not take the folder's lock: another run holds it.
  public struct Busy: Error, CustomStringConvertible {
    public let pid: Int32?
    public let folder: String
    public var description: String {
      "another taskrun\(pid.map { " (pid \($0))" } ?? "") is running this workflow here and holds its run store "
        + "(\(folder)): wait for it to end, or run this one with --no-store"
    }
  }

  /// The store's database file: one per workflow script of the folder (`build.lua.db`).
  public let path: String

  /// Opens the store of the script `script` (its file name) in `workflowFolder`. `lock`: this
  /// is a run, which makes the store on first use and takes the script's lock: while another
  /// run holds it, `waiting` is called (with that run's pid) every 50 ms for as long as it
  /// returns true; false throws `Busy`.
  public init(
    workflowFolder: String, script: String = "workflow", lock: Bool, waiting: (Int32?) -> Bool = { _ in false }
  ) throws {
    folder = workflowFolder == "/" ? "/" + Self.folderName : workflowFolder + "/" + Self.folderName
    let name = Self.fileName(script)
    path = folder + "/" + name + ".db"
    if lock {
      // Private: it keeps commands' results and errors.
      if mkdir(folder, 0o700) != 0 && errno != EEXIST {
        throw StoreError("cannot make \(folder): \(String(cString: strerror(errno)))")
      }
    }
    // Ours, and a folder: not a link an attacker planted to make us write elsewhere.
    var info = stat()
    guard lstat(folder, &info) == 0 else { throw StoreError("no run store in this folder yet") }
    guard info.st_mode & S_IFMT == S_IFDIR else { throw StoreError("\(folder) is not a folder (a link or a file)") }
    guard info.st_uid == getuid() else {
      throw StoreError("\(folder) belongs to another user (uid \(info.st_uid)): not used")
    }
    if lock {
      let lockPath = folder + "/" + name + ".lock"
      let fd = open(lockPath, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0o644)
      guard fd >= 0 else { throw StoreError("cannot open \(lockPath): \(String(cString: strerror(errno)))") }
      // flock: the kernel lets go of it when its holder dies, so a killed run's lock is no lock.
      while flock(fd, LOCK_EX | LOCK_NB) != 0 {
        var text = [UInt8](repeating: 0, count: 32)
        let n = pread(fd, &text, 31, 0)
        let pid = n > 0 ? Int32(String(decoding: text[0..<n], as: UTF8.self).trimmingNewline) : nil
        guard waiting(pid) else {
          close(fd)
          throw Busy(pid: pid, folder: folder)
        }
        usleep(50_000)
      }
      ftruncate(fd, 0)
      let pid = "\(getpid())\n"
      _ = pid.withCString { write(fd, $0, strlen($0)) }
      lockDescriptor = fd
      let ignore = folder + "/.gitignore"
      if access(ignore, F_OK) != 0 {
        let g = open(ignore, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0o644)
        if g >= 0 {
          _ = "# made by taskrun: its run store is not part of the sources\n*\n".withCString {
            write(g, $0, strlen($0))
          }
          close(g)
        }
      }
    } else {
      lockDescriptor = -1
      // A reader of a script that never ran here: nothing to read, and nothing is made.
      guard access(path, F_OK) == 0 else { throw StoreError("no run store in this folder yet") }
    }
    let opened: Result<SQLiteDatabase, StoreError> = Self.openDatabase(path, writing: lock)
    switch opened {
    case .success(let database):
      db = database
      if !lock { version = (try? db.text("SELECT value FROM meta WHERE key = 'schema'")) ?? Self.schemaVersion }
    case .failure(let error):
      if lockDescriptor >= 0 { close(lockDescriptor) }
      throw StoreError("\(path) cannot be used (\(error.description))")
    }
  }

  /// A script's name as a file name of the store: its own, with what a file name cannot
  /// hold (or should not) replaced.
  static func fileName(_ script: String) -> String {
    let base = script.split(separator: "/").last.map(String.init) ?? "workflow"
    // Percent-encoded, so that two names never share a store ("a b.lua" is "a%20b.lua").
    var safe = ""
    for byte in base.utf8 {
      let c = Character(Unicode.Scalar(byte))
      if (c.isASCII && (c.isLetter || c.isNumber)) || c == "." || c == "-" || c == "_" {
        safe.append(c)
      } else {
        safe += "%" + (byte < 16 ? "0" : "") + String(byte, radix: 16, uppercase: true)
      }
    }
    if safe.hasPrefix(".") { safe = "%2E" + safe.dropFirst() }
    return safe.isEmpty
      ? "workflow" : safe.utf8.count > 200 ? String(safe.prefix(160)) + "%" + Digest.of(Array(base.utf8)).short : safe
  }

  private static func openDatabase(_ path: String, writing: Bool) -> Result<SQLiteDatabase, StoreError> {
    do {
      let db = try SQLiteDatabase(path: path, readOnly: !writing)
      try db.execute("PRAGMA busy_timeout = 2000")
      if writing { try setUp(db) } else { try checkVersion(db) }
      return .success(db)
    } catch {
      return .failure(error)
    }
  }

  deinit {
    if uncommitted > 0 { try? db.execute("COMMIT") }
    if lockDescriptor >= 0 { close(lockDescriptor) }
  }

  private static func setUp(_ db: SQLiteDatabase) throws(StoreError) {
    // WAL: a run's commits are appends; `kill -9` at any moment leaves the last commit intact.
    _ = try db.text("PRAGMA journal_mode = WAL")
    try db.execute("PRAGMA synchronous = NORMAL")
    // A run ends with _exit, never closing the store: the WAL is checkpointed as it goes (every
    // 64 pages, not 1,000) and cut back, so the next open does not read megabytes of it.
    try db.execute("PRAGMA wal_autocheckpoint = 64; PRAGMA journal_size_limit = 1048576")
    // A store of this version has its tables: only a new one reads their definitions.
    let found = try? db.text("SELECT value FROM meta WHERE key = 'schema'")
    if found == schemaVersion {
      try db.execute("UPDATE runs SET outcome = 'killed' WHERE ended IS NULL AND outcome IS NULL")
      return
    }
    // Version 2 lacks only what version 3 added (the targets and resumed count of a run, its
    // summary): it gains them and keeps its history.
    if found == "2" { try migrateFrom2(db) }
    // An older store (a memory, not a record to keep) is started again; a newer one is left
    // to the taskrun that made it.
    if let found, found != "2", let old = Int(found), let now = Int(schemaVersion), old < now {
      try db.execute(
        """
        DROP TABLE IF EXISTS runs; DROP TABLE IF EXISTS attempts; DROP TABLE IF EXISTS failures;
        DROP TABLE IF EXISTS records; DROP TABLE IF EXISTS durations; DELETE FROM meta;
        """)
    }
    try db.execute(
      """
      CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT) WITHOUT ROWID;
      CREATE TABLE IF NOT EXISTS runs(
        id INTEGER PRIMARY KEY, started REAL NOT NULL, ended REAL, command TEXT NOT NULL,
        pid INTEGER, outcome TEXT, succeeded INTEGER, failed INTEGER, cancelled INTEGER,
        skipped INTEGER, up_to_date INTEGER, resumed INTEGER, targets BLOB);
      CREATE TABLE IF NOT EXISTS summaries(run INTEGER PRIMARY KEY, summary BLOB NOT NULL);
      CREATE TABLE IF NOT EXISTS attempts(id INTEGER PRIMARY KEY, run INTEGER NOT NULL, batch BLOB NOT NULL);
      CREATE INDEX IF NOT EXISTS attempts_in ON attempts(run);
      CREATE TABLE IF NOT EXISTS failures(operation TEXT PRIMARY KEY, run INTEGER NOT NULL, outcome TEXT NOT NULL)
        WITHOUT ROWID;
      CREATE TABLE IF NOT EXISTS records(
        operation TEXT PRIMARY KEY, run INTEGER NOT NULL, fingerprint BLOB NOT NULL, quick BLOB,
        produced BLOB NOT NULL, record BLOB NOT NULL) WITHOUT ROWID;
      CREATE TABLE IF NOT EXISTS durations(operation TEXT PRIMARY KEY, recent BLOB NOT NULL) WITHOUT ROWID;
      """)
    if let version = try db.text("SELECT value FROM meta WHERE key = 'schema'") {
      guard version == Self.schemaVersion else {
        throw StoreError("its schema is version \(version); this taskrun reads version \(Self.schemaVersion)")
      }
    } else {
      try db.execute("INSERT INTO meta VALUES ('schema', '\(Self.schemaVersion)')")
    }
    // A run that never ended held the lock we now hold: it was killed (or crashed).
    try db.execute("UPDATE runs SET outcome = 'killed' WHERE ended IS NULL AND outcome IS NULL")
  }

  /// Schema 2 to 3, in one transaction: the runs' new columns and the summaries' table.
  private static func migrateFrom2(_ db: SQLiteDatabase) throws(StoreError) {
    try db.execute("BEGIN IMMEDIATE")
    do {
      try db.execute(
        """
        ALTER TABLE runs ADD COLUMN resumed INTEGER; ALTER TABLE runs ADD COLUMN targets BLOB;
        CREATE TABLE IF NOT EXISTS summaries(run INTEGER PRIMARY KEY, summary BLOB NOT NULL);
        UPDATE meta SET value = '3' WHERE key = 'schema';
        """)
    } catch {
      try? db.execute("ROLLBACK")
      throw error
    }
    try db.execute("COMMIT")
  }

  /// The schema version read (a reader also reads a version 2 store, which no run has
  /// migrated yet: it has no targets, resumed counts or summaries).
  public private(set) var version = RunStore.schemaVersion

  private static func checkVersion(_ db: SQLiteDatabase) throws(StoreError) {
    let version = try db.text("SELECT value FROM meta WHERE key = 'schema'")
    guard version == Self.schemaVersion || version == "2" else {
      throw StoreError(
        "its schema is version \(version ?? "unknown"); this taskrun reads version \(Self.schemaVersion)")
    }
  }

  // MARK: Writing (a run)

  /// Starts a write (a transaction, committed by `commit`): one per loop turn, not per row.
  private func writing() throws(StoreError) {
    if uncommitted == 0 { try db.execute("BEGIN IMMEDIATE") }
    uncommitted += 1
  }

  /// Commits what was written since the last commit (the scheduler calls it before it waits,
  /// and every 500 writes): what finished is on disk, whatever happens to taskrun next.
  public func commit() {
    flushAttempts()
    guard uncommitted > 0 else { return }
    uncommitted = 0
    try? db.execute("COMMIT")
  }

  var hasManyUncommitted: Bool { uncommitted >= 500 }
  var hasUncommitted: Bool { uncommitted > 0 || pendingCount > 0 }

  /// A new run; returns its id.
  public func beginRun(command: String, targets: [String] = [], at time: Double) throws(StoreError) -> Int64 {
    let statement = try db.prepare("INSERT INTO runs(started, command, pid, targets) VALUES (?, ?, ?, ?)")
    statement.bind(1, time)
    statement.bind(2, command)
    statement.bind(3, Int(getpid()))
    var list = ByteWriter()
    list.count(targets.count)
    for target in targets { list.string(target) }
    statement.bind(4, list.bytes)
    try writing()
    try statement.run()
    let id = db.lastInsertedRow
    commit()
    return id
  }

  /// The counts a run's row keeps, in its columns' order.
  static let countNames = ["succeeded", "failed", "cancelled", "skipped", "up_to_date", "resumed"]

  /// Ends a run's row: its outcome, counts and (when given) its summary, for `taskrun runs show`
  /// and `taskrun report`.
  public func endRun(_ run: Int64, outcome: String, counts: [String: Int], summary: RunSummary? = nil, at time: Double)
  {
    guard
      let statement = try? db.prepare(
        "UPDATE runs SET ended = ?, outcome = ?, succeeded = ?, failed = ?, cancelled = ?, skipped = ?, up_to_date = ?, resumed = ? WHERE id = ?"
      )
    else { return }
    statement.bind(1, time)
    statement.bind(2, outcome)
    for (k, key) in Self.countNames.enumerated() {
      statement.bind(Int32(k + 3), counts[key] ?? 0)
    }
    statement.bind(9, run)
    try? writing()
    try? statement.run()
    if let summary, let s = try? db.prepare("INSERT OR REPLACE INTO summaries VALUES (?, ?)") {
      s.bind(1, run)
      s.bind(2, RecordedSummary.encoded(summary))
      try? s.run()
    }
    commit()
  }

  /// Notes an attempt; attempts are written together, one row a commit (an append-only log,
  /// as ninja's `.ninja_log`: a row per attempt cost a command 20,000 instructions).
  public func record(_ a: AttemptRecord, run: Int64) {
    if pendingRun != run { flushAttempts() }
    pendingRun = run
    pending.string(a.operation)
    pending.count(a.attempt)
    pending.string(a.outcome)
    pending.double(a.started)
    pending.optionalDouble(a.duration)
    pending.optionalDouble(a.queueWait)
    pending.optionalInt(a.exitStatus.map(Int64.init))
    pending.optionalInt(a.peakMemory)
    pending.optionalDouble(a.cpuSeconds)
    pending.optionalString(a.error.map { $0.utf8.count > 4000 ? String($0.prefix(4000)) : $0 })
    pending.optionalString(a.identity)
    pending.optionalString(a.result)
    pending.optionalString(a.job)
    pending.optionalString(a.why)
    pendingCount += 1
    if pendingCount >= 500 { flushAttempts() }
  }

  /// `record` of a success that has nothing but its times (a Lua body, a pure target).
  public func recordSuccess(
    of operation: String, attempt: Int, started: Double, duration: Double, queueWait: Double?, run: Int64
  ) {
    if pendingRun != run { flushAttempts() }
    pendingRun = run
    pending.string(operation)
    pending.count(attempt)
    pending.string("succeeded")
    pending.double(started)
    pending.optionalDouble(duration)
    pending.optionalDouble(queueWait)
    // No exit status, memory, CPU, error, identity, result, job or why.
    pending.bytes.append(contentsOf: [0, 0, 0, 0, 0, 0, 0, 0])
    pendingCount += 1
    if pendingCount >= 500 { flushAttempts() }
  }

  /// Attempts noted and not yet written, for the run `pendingRun`.
  private var pending = ByteWriter()
  private var pendingCount = 0
  private var pendingRun: Int64 = 0
  private var insertBatch: SQLiteStatement?

  private func flushAttempts() {
    guard pendingCount > 0 else { return }
    if insertBatch == nil { insertBatch = try? db.prepare("INSERT INTO attempts(run, batch) VALUES (?, ?)") }
    defer { (pending.bytes, pendingCount) = ([], 0) }
    guard let s = insertBatch else { return }
    s.bind(1, pendingRun)
    s.bind(2, pending.bytes)
    try? writing()
    try? s.run()
  }

  public func save(_ record: OperationRecord, of operation: String) {
    if upsertRecord == nil {
      upsertRecord = try? db.prepare("INSERT OR REPLACE INTO records VALUES (?, ?, ?, ?, ?, ?)")
    }
    guard let s = upsertRecord else { return }
    s.bind(1, operation)
    s.bind(2, record.run)
    s.bind(3, Self.bytes(record.fingerprint))
    s.bind(4, record.quick.map(Self.bytes))
    s.bind(5, Self.bytes(OperationRecord.producedDigest(record.produced)))
    s.bind(6, record.encoded())
    try? writing()
    try? s.run()
  }

  /// An operation's recent successful durations, newest first.
  public func saveDurations(_ list: [Double], of operation: String) {
    if upsertDurations == nil { upsertDurations = try? db.prepare("INSERT OR REPLACE INTO durations VALUES (?, ?)") }
    guard let s = upsertDurations else { return }
    s.bind(1, operation)
    var bytes: [UInt8] = []
    bytes.reserveCapacity(list.count * 8)
    for d in list { withUnsafeBytes(of: d.bitPattern.littleEndian) { bytes.append(contentsOf: $0) } }
    s.bind(2, bytes)
    try? writing()
    try? s.run()
  }

  static func bytes(_ digest: Digest) -> [UInt8] {
    var w = ByteWriter()
    w.digest(digest)
    return w.bytes
  }

  static func digest(_ bytes: [UInt8]) -> Digest? {
    var r = ByteReader(bytes)
    return r.digest()
  }

  /// Keeps the newest `count` runs and their attempts (records of last successes stay).
  public func prune(keeping count: Int) {
    try? writing()
    try? db.execute(
      """
      DELETE FROM attempts WHERE run IN (SELECT id FROM runs ORDER BY id DESC LIMIT -1 OFFSET \(max(1, count)));
      DELETE FROM summaries WHERE run IN (SELECT id FROM runs ORDER BY id DESC LIMIT -1 OFFSET \(max(1, count)));
      DELETE FROM runs WHERE id IN (SELECT id FROM runs ORDER BY id DESC LIMIT -1 OFFSET \(max(1, count)));
      """)
    commit()
  }

  // MARK: Reading

  /// What the store says of an operation's last success, without its record decoded.
  public struct Summary: Sendable {
    public var run: Int64
    public var fingerprint: Digest
    /// Its quick signature (nil: its files must be looked at and hashed).
    public var quick: Digest?
    /// The hash of what it produced.
    public var produced: Digest
  }

  /// Every operation's last success, in brief (one row each, nothing decoded).
  public func summaries() -> [String: Summary] {
    guard let s = try? db.prepare("SELECT operation, run, fingerprint, quick, produced FROM records") else {
      return [:]
    }
    var found: [String: Summary] = [:]
    if let count = try? db.text("SELECT count(*) FROM records").flatMap({ Int($0) }) { found.reserveCapacity(count) }
    while (try? s.step()) == true {
      guard let name = s.text(0), let fingerprint = s.digest(2), let produced = s.digest(4) else { continue }
      found[name] = Summary(run: s.int(1), fingerprint: fingerprint, quick: s.digest(3), produced: produced)
    }
    return found
  }

  /// One operation's record of its last success (nil: none, or not readable).
  public func record(of operation: String) -> OperationRecord? {
    if selectRecord == nil {
      selectRecord = try? db.prepare("SELECT run, fingerprint, record FROM records WHERE operation = ?")
    }
    guard let s = selectRecord else { return nil }
    defer { s.reset() }
    s.bind(1, operation)
    guard (try? s.step()) == true, let fingerprint = Self.digest(s.blob(1)) else { return nil }
    return OperationRecord(run: s.int(0), fingerprint: fingerprint, bytes: s.blob(2))
  }

  /// The operations whose latest attempt did not succeed, with its run and outcome (what
  /// `why` says of one that never succeeded since: `last run failed`).
  public func failures() -> [String: (run: Int64, outcome: String)] {
    guard let s = try? db.prepare("SELECT operation, run, outcome FROM failures") else { return [:] }
    var found: [String: (Int64, String)] = [:]
    while (try? s.step()) == true {
      if let name = s.text(0), let outcome = s.text(2) { found[name] = (s.int(1), outcome) }
    }
    return found
  }

  /// Notes an operation's failure (`outcome` nil: its success ends the note).
  public func noteFailure(of operation: String, run: Int64, outcome: String?) {
    let sql =
      outcome == nil
      ? "DELETE FROM failures WHERE operation = ?1" : "INSERT OR REPLACE INTO failures VALUES (?1, ?2, ?3)"
    guard let s = try? db.prepare(sql) else { return }
    s.bind(1, operation)
    if let outcome {
      s.bind(2, run)
      s.bind(3, outcome)
    }
    try? writing()
    try? s.run()
  }

  /// The durations of each operation's recent successes, newest first.
  public func durations() -> [String: [Double]] {
    guard let s = try? db.prepare("SELECT operation, recent FROM durations") else { return [:] }
    var found: [String: [Double]] = [:]
    while (try? s.step()) == true {
      guard let name = s.text(0) else { continue }
      found[name] = s.doubles(1).filter { $0.isFinite && $0 >= 0 }
    }
    return found
  }

  /// The newest runs, newest first (`id`: that run only).
  public func runs(limit: Int = 20, id: Int64? = nil) -> [RunRecord] {
    let newer = version != "2"
    guard
      let s = try? db.prepare(
        "SELECT id, started, ended, command, outcome, succeeded, failed, cancelled, skipped, up_to_date, "
          + (newer ? "resumed, targets" : "NULL, NULL")
          + " FROM runs WHERE id = coalesce(?2, id) ORDER BY id DESC LIMIT ?1"
      )
    else { return [] }
    s.bind(1, limit)
    s.bind(2, id)
    var found: [RunRecord] = []
    while (try? s.step()) == true {
      var counts: [String: Int] = [:]
      for (k, key) in Self.countNames.enumerated() {
        // A count is a count: a doctored row's negative or huge one is not shown as one.
        if let n = s.optionalInt(Int32(k + 5)), n >= 0, n < 1 << 40 { counts[key] = Int(n) }
      }
      var run = RunRecord(
        id: s.int(0), started: s.double(1) ?? 0, ended: s.double(2), command: s.text(3) ?? "",
        outcome: s.text(4), counts: counts)
      if newer, !s.isNull(11) {
        var r = ByteReader(s.blob(11))
        if let n = r.count() {
          var targets: [String] = []
          for _ in 0..<n {
            guard let target = r.string() else { break }
            targets.append(target)
          }
          run.targets = targets
        }
      }
      found.append(run)
    }
    return found
  }

  /// The summary a run's end recorded (nil: none, as for a killed run or a run of a schema 2
  /// store, or one that does not read: `summaryIsDamaged`).
  public func summary(of run: Int64) -> RecordedSummary? {
    summaryBytes(of: run).flatMap(RecordedSummary.init(bytes:))
  }

  /// Whether the run has a summary row that is no summary (a damaged or doctored store).
  public func summaryIsDamaged(of run: Int64) -> Bool {
    summaryBytes(of: run).map { RecordedSummary(bytes: $0) == nil } ?? false
  }

  private func summaryBytes(of run: Int64) -> [UInt8]? {
    guard version != "2", let s = try? db.prepare("SELECT summary FROM summaries WHERE run = ?") else { return nil }
    s.bind(1, run)
    guard (try? s.step()) == true else { return nil }
    return s.blob(0)
  }

  /// The attempts of one run (in the order they ended), or of one operation over the kept
  /// runs (newest first), at most `limit`.
  public func attempts(run: Int64? = nil, operation: String? = nil, limit: Int = 1_000_000) -> [(Int64, AttemptRecord)]
  {
    flushAttempts()
    let filter = run != nil ? "WHERE run = ?1 ORDER BY id" : "ORDER BY id DESC"
    guard let s = try? db.prepare("SELECT run, batch FROM attempts \(filter)") else { return [] }
    if let run { s.bind(1, run) }
    var found: [(Int64, AttemptRecord)] = []
    while (try? s.step()) == true, found.count < limit {
      let batchRun = s.int(0)
      var batch: [(Int64, AttemptRecord)] = []
      var r = ByteReader(s.blob(1))
      while !r.atEnd, let a = Self.attempt(&r) {
        if operation == nil || a.operation == operation { batch.append((batchRun, a)) }
      }
      found += run == nil ? Array(batch.reversed()) : batch  // newest first across runs
    }
    return Array(found.prefix(limit))
  }

  private static func attempt(_ r: inout ByteReader) -> AttemptRecord? {
    guard let name = r.string(), let number = r.count(), let outcome = r.string(), let started = r.double(),
      let duration = r.optionalDouble(), let wait = r.optionalDouble(), let exit = r.optionalInt(),
      let memory = r.optionalInt(), let cpu = r.optionalDouble()
    else { return nil }
    var a = AttemptRecord(operation: name, attempt: number, outcome: outcome, started: started)
    (a.duration, a.queueWait, a.exitStatus) = (duration, wait, exit.map { Int(truncatingIfNeeded: $0) })
    (a.peakMemory, a.cpuSeconds) = (memory, cpu)
    var texts: [String?] = []
    for _ in 0..<5 {
      guard let text = r.optionalString() else { return nil }
      texts.append(text)
    }
    (a.error, a.identity, a.result, a.job, a.why) = (texts[0], texts[1], texts[2], texts[3], texts[4])
    return a
  }

  /// The newest run's id (nil: none yet), not counting runs that ended in a usage or script
  /// error (they ran nothing to resume).
  public func lastRun(before: Int64? = nil) -> Int64? {
    guard let s = try? db.prepare("SELECT max(id) FROM runs WHERE id < ? AND coalesce(outcome, '') != 'error'")
    else { return nil }
    s.bind(1, before ?? Int64.max)
    guard (try? s.step()) == true else { return nil }
    return s.optionalInt(0)
  }

  /// Whether a run of the script holds the store now (a reader's question: a run that never
  /// ended while nobody holds the lock was killed).
  public var isHeld: Bool {
    if lockDescriptor >= 0 { return true }
    let fd = open(String(path.dropLast(3)) + ".lock", O_RDONLY | O_CLOEXEC | O_NOFOLLOW)
    guard fd >= 0 else { return false }
    defer { close(fd) }
    return flock(fd, LOCK_SH | LOCK_NB) != 0
  }

  /// `PRAGMA integrity_check`'s answer ("ok" for a sound store).
  public func integrity() -> String { (try? db.text("PRAGMA integrity_check")) ?? "unreadable" }
}

extension String {
  fileprivate var trimmingNewline: String {
    var s = self
    while s.last == "\n" || s.last == "\0" { s.removeLast() }
    return s
  }
}
