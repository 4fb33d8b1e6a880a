// CommandSandbox: what `--sandbox` lets an operation ask for, read from `sandbox = {…}` and checked where it is declared.
import CLua
import CLuaShim
import FoundationEssentials
import TaskEngine

/// A run whose commands are confined: the widenings the command line allows (`--sandbox-allow`).
public struct CommandSandbox: Sendable {
  public var allowed: Set<SandboxGrant.Kind>

  public init(allowed: Set<SandboxGrant.Kind>) { self.allowed = allowed }

  /// Refuses a grant that asks for what the command line does not allow.
  func check(_ grant: SandboxGrant, what: String) throws {
    let refused = grant.kinds.filter { !allowed.contains($0) }
    guard !refused.isEmpty else { return }
    let asked = refused.map { kind in
      switch kind {
      case .network: "network (sandbox.network = true)"
      case .read: "reading \(grant.read.joined(separator: ", "))"
      case .write: "writing \(grant.write.joined(separator: ", "))"
      }
    }.joined(separator: " and ")
    throw ScriptError(
      "\(what) asks the sandbox for \(asked), which this run does not allow: "
        + "run with --sandbox-allow \(refused.map(\.rawValue).joined(separator: ",")) to allow it")
  }
}

extension ScriptHost {
  static let sandboxFields = ["read", "write", "network"]

  /// `sandbox = { read = path | {paths}, write = path | {paths}, network = bool }`: paths
  /// relative to taskrun's folder are made whole, with their links resolved where they exist.
  /// Checked against `--sandbox-allow` when the run confines its commands; checked and dropped
  /// otherwise (nil: it would mean nothing, so nothing shows it).
  func sandboxGrant(_ s: LuaStack, _ i: Int32, what: String) throws -> SandboxGrant? {
    guard s.type(i) == LUA_TTABLE else {
      throw ScriptError(
        "\(what): field 'sandbox' must be a table { read =, write =, network = } (got \(s.typeName(i)))")
    }
    let place = "\(what): sandbox"
    try checkFields(s, i, valid: Self.sandboxFields, in: place)
    let network = try optionalBoolean(s, i, "network", in: place) ?? false
    var read: [String] = [], write: [String] = []
    for field in ["read", "write"] {
      s.rawGet(i, field)
      defer { s.pop() }
      guard !s.isNil(-1) else { continue }
      var paths: [String] = []
      try eachItem(
        s, -1, isItem: { s.type($0) == LUA_TSTRING }, list: "\(place).\(field) must be a path or a list of paths"
      ) { item in
        guard let path = s.string(item), !path.isEmpty else {
          throw ScriptError("\(place).\(field): a path must be a non-empty string (got \(s.typeName(item)))")
        }
        paths.append(Confinement.resolved(Self.wholePath(try CommandText.word(path, "\(place).\(field)"))))
      }
      if field == "read" { read = paths } else { write = paths }
    }
    let grant = SandboxGrant(read: read, write: write, network: network)
    guard let commandSandbox else { return nil }
    try commandSandbox.check(grant, what: what)
    return grant
  }

  /// `path` from taskrun's folder, without "." and ".." parts.
  public static func wholePath(_ path: String) -> String {
    Confinement.standardized(path.hasPrefix("/") ? path : ProcessRunner.currentDirectory() + "/" + path)
  }

  /// `op.sandbox`: nil when the run's commands are not confined; else what its commands may
  /// do beyond the defaults: { network =, read = {…}, write = {…} }.
  func pushSandbox(of op: OperationNode, on s: LuaStack) {
    guard commandSandbox != nil else { return s.pushNil() }
    let grant = op.body?.sandbox ?? .none
    s.newTable(hash: 3)
    s.push(grant.network)
    s.rawSet(-2, "network")
    for (key, paths) in [("read", grant.read), ("write", grant.write)] {
      s.newTable(array: Int32(paths.count))
      for (k, path) in paths.enumerated() {
        s.push(path)
        s.rawSet(-2, k + 1)
      }
      s.rawSet(-2, key)
    }
  }
}
