// Confinement: the kernel objects that hold a `--sandbox` run's commands, made once and reused.
import CSpawn
import FoundationEssentials
import Glibc
import Synchronization

/// Why the sandbox cannot confine commands (the kernel lacks something, a path it needs is
/// missing); said to the user as it is.
public struct SandboxError: Error, CustomStringConvertible, Sendable {
  public let description: String
  public init(_ description: String) { self.description = description }
}

/// What every command of a `--sandbox` run may do, and the kernel objects that enforce it
/// (see docs/guide.md, "The sandbox"):
/// - file system (Landlock, and a mount namespace where everything else is read-only): read
///   and run the system and PATH's folders, read and write the workflow's folder and a
///   private temporary folder (`TMPDIR`, removed at the end), nothing else;
/// - network (an empty network namespace, Landlock's TCP rules, a seccomp filter on
///   `socket`): none;
/// - processes (Landlock's signal scope, and the runner's ownership guarantees): signal
///   nothing outside its own command;
/// - privileges: no_new_privs, no capability but a root's owner rights;
/// - environment: PATH, HOME, LANG, LC_*, TERM, TMPDIR and what the script sets.
/// An operation's grant widens it (`rules(for:)`). The namespaces for each set of writable
/// folders and the ruleset for each grant are made on first use, by the scheduler's thread,
/// and kept for the run; a command only joins them (a few system calls).
public final class Confinement: @unchecked Sendable {
  /// The folder of the workflow's script, and the run's private temporary folder.
  public let workflowFolder: String
  public let temporaryFolder: String
  /// PATH's folders (a toolchain's own), read and run.
  public let toolFolders: [String]
  /// The environment every command starts from (`environment(adding:)`; what `os.getenv`
  /// sees), and as NAME=value.
  public let environment: [String: String]
  private let baseEntries: [String]

  private struct Namespaces { var user: Int32, mount: Int32, network: Int32 }
  private let lock = Lock()
  private var namespaces: [[String]: Namespaces] = [:]
  private var rulesets: [SandboxGrant: Int32] = [:]

  /// Temporary folders to remove on every way out (`removeTemporaryFolders`).
  private static let made = Mutex<[String]>([])

  /// The most different sets of writable folders, and different grants, a run's widenings
  /// may add to the defaults': each set keeps three namespaces open (made by a helper
  /// process), each grant a ruleset.
  public static let maxWritableSets = 64
  public static let maxGrants = 256

  /// Landlock's ABI the sandbox needs: 6 (Linux 6.12) scopes signals and abstract sockets.
  public static let neededABI: Int32 = 6

  /// Checks the kernel and makes what every command needs, so that a run that cannot be
  /// confined fails before anything runs (it never runs unconfined).
  public init(workflowFolder: String, environment: [String: String]) throws(SandboxError) {
    let abi = cs_landlock_abi()
    guard abi >= Self.neededABI else {
      throw SandboxError(
        abi < 0
          ? "the kernel has no Landlock (\(String(cString: strerror(-abi)))): it needs Linux 6.12 or later with Landlock enabled (lsm=…,landlock)"
          : "the kernel's Landlock is ABI \(abi), and the sandbox needs ABI \(Self.neededABI) (Linux 6.12) to keep commands from signalling processes outside it"
      )
    }
    // mkdtemp's template: six letters it replaces
    let template = "/taskrun-sandbox-" + String(repeating: "X", count: 6)
    var folder = Array((Self.temporaryRoot(environment) + template).utf8CString)
    guard mkdtemp(&folder) != nil else {
      throw SandboxError(
        "cannot make its temporary folder in \(Self.temporaryRoot(environment)): \(String(cString: strerror(errno)))")
    }
    let temporary = Self.resolved(String(cString: folder))
    temporaryFolder = temporary
    Self.made.withLock { $0.append(temporary) }
    self.workflowFolder = workflowFolder
    let home = environment["HOME"].map(Self.standardized)
    toolFolders = Self.toolFolders(path: environment["PATH"] ?? "", home: home)
    var base = environment.filter { Self.passedOn($0.key) }
    base["TMPDIR"] = temporary
    self.environment = base
    baseEntries = base.map { "\($0.key)=\($0.value)" }
    do {
      _ = try rules(for: nil)
    } catch {
      end()
      throw error
    }
  }

  /// The names of taskrun's environment a command is given.
  static func passedOn(_ name: String) -> Bool {
    name == "PATH" || name == "HOME" || name == "LANG" || name == "TERM" || name.hasPrefix("LC_")
  }

  /// `TMPDIR` if it names a folder, else /tmp.
  static func temporaryRoot(_ environment: [String: String]) -> String {
    guard let dir = environment["TMPDIR"], dir.hasPrefix("/") else { return "/tmp" }
    var info = stat()
    return stat(dir, &info) == 0 && info.st_mode & S_IFMT == S_IFDIR ? dir : "/tmp"
  }

  /// PATH's absolute folders that exist, links resolved, but `/` and the home folder or any
  /// folder above it (a link in PATH to `/` would open everything).
  static func toolFolders(path: String, home: String?) -> [String] {
    var seen = Set<String>()
    var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
    let home = home.map { realpath($0, &buffer).map { String(cString: $0) } ?? $0 }
    return path.split(separator: ":").map(String.init).compactMap { entry in
      guard entry.hasPrefix("/"), let resolved = realpath(entry, &buffer) else { return nil }
      let folder = String(cString: resolved)
      if folder == "/" { return nil }
      if let home, home == folder || home.hasPrefix(folder + "/") { return nil }
      var info = stat()
      guard stat(folder, &info) == 0, info.st_mode & S_IFMT == S_IFDIR, seen.insert(folder).inserted else { return nil }
      return folder
    }
  }

  /// `path` (whole) with its links resolved, if it exists; else as it is. The sandbox's rules
  /// take a path only where it resolves to itself (a link planted later is refused).
  public static func resolved(_ path: String) -> String {
    var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
    return realpath(path, &buffer).map { String(cString: $0) } ?? path
  }

  /// The folder `path` (whole) is in.
  public static func parent(_ path: String) -> String {
    guard let slash = path.lastIndex(of: "/"), slash != path.startIndex else { return "/" }
    return String(path[..<slash])
  }

  /// `path` (whole) without "." and ".." parts, and without links resolved.
  public static func standardized(_ path: String) -> String {
    var parts: [Substring] = []
    for part in path.split(separator: "/") where part != "." {
      if part == ".." { _ = parts.popLast() } else { parts.append(part) }
    }
    return "/" + parts.joined(separator: "/")
  }

  /// The environment of a command: the passed-on names, TMPDIR, and `extra` over them.
  public func environment(adding extra: [String: String]) -> [String] {
    if extra.isEmpty { return baseEntries }
    var merged = environment
    for (name, value) in extra { merged[name] = value }
    return merged.map { "\($0.key)=\($0.value)" }
  }

  /// The folders a command with `grant` may write.
  public func writable(_ grant: SandboxGrant?) -> [String] {
    [workflowFolder, temporaryFolder] + (grant?.write ?? [])
  }

  /// The namespaces and ruleset a command of an operation with `grant` enters (its
  /// `directory` is set by the caller).
  public func rules(for grant: SandboxGrant?) throws(SandboxError) -> cs_confinement {
    let grant = grant ?? .none
    lock.lock()
    defer { lock.unlock() }
    let write = writable(grant)
    let spaces: Namespaces
    if let known = namespaces[write] {
      spaces = known
    } else {
      guard namespaces.count <= Self.maxWritableSets else {
        throw SandboxError(
          "the operations ask for more than \(Self.maxWritableSets) different sets of folders to write: "
            + "give them fewer, wider folders")
      }
      var user: Int32 = -1, mount: Int32 = -1, network: Int32 = -1
      var why = [CChar](repeating: 0, count: 512)
      let rc = withCStringList(write) { cs_sandbox_namespaces($0, &user, &mount, &network, &why, why.count) }
      guard rc == 0 else { throw SandboxError(String(cString: why)) }
      spaces = Namespaces(user: user, mount: mount, network: network)
      namespaces[write] = spaces
    }
    let ruleset: Int32
    if let known = rulesets[grant] {
      ruleset = known
    } else {
      guard rulesets.count <= Self.maxGrants else {
        throw SandboxError(
          "the operations ask for more than \(Self.maxGrants) different sandbox = { … }: give them fewer, wider ones")
      }
      var fd: Int32 = -1
      var why = [CChar](repeating: 0, count: 512)
      let rc = withCStringList(toolFolders + grant.read) { read in
        withCStringList(write) { write in cs_landlock_ruleset(read, write, grant.network ? 1 : 0, &fd, &why, why.count)
        }
      }
      guard rc == 0 else { throw SandboxError(String(cString: why)) }
      rulesets[grant] = fd
      ruleset = fd
    }
    return cs_confinement(
      user_fd: spaces.user, mnt_fd: spaces.mount, net_fd: spaces.network, ruleset_fd: ruleset,
      network: grant.network ? 1 : 0, directory: nil)
  }

  /// Closes what it made and removes the temporary folder (with what commands left in it).
  public func end() {
    lock.lock()
    for spaces in namespaces.values {
      for fd in [spaces.user, spaces.mount, spaces.network] where fd >= 0 { close(fd) }
    }
    for fd in rulesets.values { close(fd) }
    namespaces = [:]
    rulesets = [:]
    lock.unlock()
    Self.remove(temporaryFolder)
  }

  /// Removes every temporary folder a sandbox made: on the ways out that no `end` reaches.
  public static func removeTemporaryFolders() {
    for folder in made.withLock({ $0 }) { remove(folder) }
  }

  private static func remove(_ folder: String) {
    made.withLock { $0.removeAll { $0 == folder } }
    cs_remove_tree(folder)
  }
}

/// `body` with `strings` as a NULL-ended C array of constant strings (`withCStrings`'s).
func withCStringList<R>(_ strings: [String], _ body: (UnsafePointer<UnsafePointer<CChar>?>) -> R) -> R {
  withCStrings(strings) { pointers in
    pointers.withUnsafeBufferPointer { buffer in
      buffer.baseAddress!.withMemoryRebound(to: UnsafePointer<CChar>?.self, capacity: buffer.count) { body($0) }
    }
  }
}
