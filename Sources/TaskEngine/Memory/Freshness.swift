// Freshness: what an operation declares for incremental runs (inputs, outputs, depfile, key, fresh), and what became of it.

/// An operation's declarations for incremental runs (Lua: `inputs`, `outputs`, `depfile`,
/// `key`, `fresh`). An operation with one is skipped as up to date while its fingerprint and
/// its outputs are as at its last success.
public final class Freshness {
  /// Files and globs it reads (`**` any depth; a folder stands for its files).
  public var inputs: [String] = []
  /// Files, globs and folders it makes: hashed after it succeeds, removed when it fails.
  public var outputs: [String] = []
  /// A Makefile-style dependency file its command writes: what it names are inputs next time.
  public var depfile: String?
  /// Any other values that must invalidate it, as stable text (`key = { cflags = … }`).
  public var key: String?
  /// `fresh = function(op) … end`: nil when it is fresh, else why it must run.
  public var check: ((OperationNode) -> String?)?

  public init() {}

  var declaresFiles: Bool { !inputs.isEmpty || !outputs.isEmpty || depfile != nil || key != nil }
}

/// Why an operation did not run: up to date by its fingerprint, or reused by `--resume`.
public enum Reuse: Sendable, Equatable {
  case upToDate(since: Int64)
  case resumed(from: Int64)

  /// The outcome's name in lines, events and Lua (`up_to_date`, `resumed`).
  public var outcomeName: String {
    switch self {
    case .upToDate: "up_to_date"
    case .resumed: "resumed"
    }
  }
}

extension OperationNode {
  /// Its declarations for incremental runs (nil: it always runs).
  public var freshness: Freshness? {
    get { extrasStorage?.freshness }
    set { if extrasStorage != nil || newValue != nil { extras.freshness = newValue } }
  }
  /// Set when it finished without running: up to date, or reused from a resumed run.
  public internal(set) var reuse: Reuse? {
    get { extrasStorage?.reuse }
    set { if extrasStorage != nil || newValue != nil { extras.reuse = newValue } }
  }
  /// Why it ran or would run, or why not ("input a.c changed", "up to date since run 4"):
  /// set by the run store's check.
  public internal(set) var why: String? {
    get { extrasStorage?.why }
    set { if extrasStorage != nil || newValue != nil { extras.why = newValue } }
  }
  /// Its outcome's name: `up_to_date` or `resumed` for one that did not run, else the outcome's.
  public var outcomeName: String? {
    guard let outcome else { return nil }
    if outcome == .succeeded, let reuse { return reuse.outcomeName }
    return outcome.rawValue
  }
}
