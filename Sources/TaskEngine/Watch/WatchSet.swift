// WatchSet: what `taskrun -w` watches for a graph: the folders of its inputs and script files, and which paths there matter.
import Glibc

/// The files a change of which makes a new cycle: the inputs the selected operations declare
/// (plain files, folders, globs with `**`), their depfiles' prerequisites, the script and the
/// Lua files it loaded. Paths are whole and normalized. Outputs any operation declares, and
/// the run store's folder, never matter (a cycle's own writes must not start the next one).
public struct WatchSet: Sendable {
  /// Folders watched at most, below all roots together.
  public static let maxFolders = 20_000
  public static let empty = WatchSet()

  /// Single files, watched through their folder.
  private(set) var files: Set<String> = []
  /// Folders watched for the files above (not below them).
  private(set) var folders: [String] = []
  /// Folders watched with every folder below them, with the patterns that match there.
  private(set) var roots: [String] = []
  private var patterns: [[Substring]] = []
  /// Outputs: plain paths, and patterns.
  private var outputs: Set<String> = []
  private var outputPatterns: [[Substring]] = []

  public init() {}

  /// The set for `ops` (those a run selected, with what they depend on), the script files
  /// `extra`, and the files the run store found in their depfiles (`discovered`); relative
  /// paths are taken from `folder` (taskrun's own).
  public static func of(
    _ ops: [OperationNode], extra: [String], discovered: (OperationNode) -> [String], all: [OperationNode],
    folder: String
  ) -> WatchSet {
    var set = WatchSet()
    var folders = Set<String>()
    func addFile(_ path: String) {
      guard !isPseudo(path) else { return }
      set.files.insert(path)
      folders.insert(parent(path))
      // A link: what it points to changes, not the link.
      if let real = resolved(path), real != path, !isPseudo(real) {
        set.files.insert(real)
        folders.insert(parent(real))
      }
    }
    for op in all {
      guard let freshness = op.freshness else { continue }
      for output in freshness.outputs {
        let path = normalized(output, in: folder)
        if Globs.isPattern(path) { set.outputPatterns.append(components(path)) } else { set.outputs.insert(path) }
      }
      if let depfile = freshness.depfile { set.outputs.insert(normalized(depfile, in: folder)) }
    }
    for path in extra { addFile(normalized(path, in: folder)) }
    for op in ops {
      guard let freshness = op.freshness else { continue }
      for input in freshness.inputs {
        let path = normalized(input, in: folder)
        if Globs.isPattern(path) {
          let parts = components(path)
          let literal = parts.prefix { !Globs.isPattern(String($0)) }
          set.roots.append("/" + literal.joined(separator: "/"))
          set.patterns.append(parts)
          folders.insert(parent("/" + literal.joined(separator: "/")))  // the root itself may come and go
        } else if Globs.isFolder(path) {
          set.roots.append(path)
          set.patterns.append(components(path) + ["**"])
          folders.insert(parent(path))
        } else {
          addFile(path)
        }
      }
      for path in discovered(op) { addFile(normalized(path, in: folder)) }
    }
    set.folders = folders.filter { !isPseudo($0) }.sorted()
    return set
  }

  /// Files and roots watched (for a line that says how much is watched).
  public var fileCount: Int { files.count + roots.count }

  /// Whether a change of `path` matters.
  func matters(_ path: String, isFolder: Bool) -> Bool {
    if path.contains("/.taskrun/") || path.hasSuffix("/.taskrun") { return false }
    if outputs.contains(path) { return false }
    let parts = Self.components(path)
    for pattern in outputPatterns where Self.match(pattern[...], parts[...]) { return false }
    if files.contains(path) { return true }
    for (i, root) in roots.enumerated() where path == root || path.hasPrefix(root == "/" ? "/" : root + "/") {
      // A folder made or removed below a root may hold (or have held) matching files.
      if isFolder || Self.match(patterns[i][...], parts[...]) { return true }
    }
    // A root folder itself made or removed (seen from its parent).
    return isFolder && roots.contains(path)
  }

  /// Whether `path` lies below one of the roots (a new folder there is watched too).
  func isBelowRoot(_ path: String) -> Bool {
    roots.contains { path == $0 || path.hasPrefix($0 == "/" ? "/" : $0 + "/") }
  }

  /// Whether `path` is one a change of which would change `op`'s inputs (the script files
  /// aside): a running operation it is true of is cancelled.
  public static func declares(_ op: OperationNode, _ path: String, folder: String) -> Bool {
    guard let freshness = op.freshness else { return false }
    let parts = components(path)
    for input in freshness.inputs {
      let whole = normalized(input, in: folder)
      if whole == path || path.hasPrefix(whole + "/") { return true }
      if Globs.isPattern(whole) && match(components(whole)[...], parts[...]) { return true }
    }
    return false
  }

  // MARK: Paths

  /// `path` whole (from `folder`), with `.`, `..` and repeated slashes resolved by name.
  public static func normalized(_ path: String, in folder: String) -> String {
    let whole = path.hasPrefix("/") ? path : folder + "/" + path
    var parts: [Substring] = []
    for part in whole.split(separator: "/", omittingEmptySubsequences: true) {
      if part == "." { continue }
      if part == ".." {
        _ = parts.popLast()
        continue
      }
      parts.append(part)
    }
    return "/" + parts.joined(separator: "/")
  }

  /// /proc, /sys and /dev: not files anyone edits, and every write to /dev/null is a change there.
  public static func isPseudo(_ path: String) -> Bool {
    for top in ["/proc", "/sys", "/dev"] where path == top || path.hasPrefix(top + "/") { return true }
    return false
  }

  /// `path` with every link resolved (nil: it does not exist).
  static func resolved(_ path: String) -> String? {
    guard let real = realpath(path, nil) else { return nil }
    defer { free(real) }
    return String(cString: real)
  }

  static func parent(_ path: String) -> String {
    guard let slash = path.lastIndex(of: "/"), slash != path.startIndex else { return "/" }
    return String(path[..<slash])
  }

  static func components(_ path: String) -> [Substring] {
    var parts: [Substring] = []
    for part in path.split(separator: "/", omittingEmptySubsequences: true) where !(part == "**" && parts.last == "**")
    {
      parts.append(part)
    }
    return parts
  }

  /// A pattern's components against a path's: `*`, `?` and `[…]` within a name (fnmatch),
  /// `**` any number of names. Past 100,000 steps (a pattern of many `**`), it matches.
  static func match(_ pattern: ArraySlice<Substring>, _ path: ArraySlice<Substring>) -> Bool {
    var steps = 0
    return match(pattern, path, &steps)
  }

  private static func match(_ pattern: ArraySlice<Substring>, _ path: ArraySlice<Substring>, _ steps: inout Int)
    -> Bool
  {
    steps += 1
    if steps > 100_000 { return true }
    guard let first = pattern.first else { return path.isEmpty }
    if first == "**" {
      var rest = path
      while true {
        if match(pattern.dropFirst(), rest, &steps) { return true }
        guard !rest.isEmpty else { return false }
        rest = rest.dropFirst()
      }
    }
    guard let name = path.first, fnmatch(String(first), String(name), 0) == 0 else { return false }
    return match(pattern.dropFirst(), path.dropFirst(), &steps)
  }
}
