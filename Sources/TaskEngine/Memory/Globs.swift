// Globs: the files that `inputs` and `outputs` patterns name now (`*`, `?`, `[…]` per name, `**` any depth; a folder names its files).
import Glibc

enum Globs {
  /// Files one operation's patterns may name: past this, the check fails with a message.
  static let maxFiles = 200_000

  /// Whether `path` is a pattern rather than a plain path.
  static func isPattern(_ path: String) -> Bool {
    path.utf8.contains { $0 == UInt8(ascii: "*") || $0 == UInt8(ascii: "?") || $0 == UInt8(ascii: "[") }
  }

  /// The files `patterns` name now, sorted and without repeats. A plain path that names no
  /// file stays in the list (so that its absence is seen); a folder, named or matched,
  /// stands for every file below it; links to folders are not followed. Nil: more than
  /// `maxFiles`.
  static func expand(_ patterns: [String]) -> [String]? {
    var found: [String] = []
    for pattern in patterns {
      if !isPattern(pattern) {
        if isFolder(pattern) {
          guard walk(pattern, into: &found) else { return nil }
        } else {
          found.append(pattern)
        }
      } else {
        let absolute = pattern.hasPrefix("/")
        let parts = pattern.split(separator: "/", omittingEmptySubsequences: true)
        guard match(absolute ? "/" : "", parts[...], into: &found) else { return nil }
      }
      if found.count > maxFiles { return nil }
    }
    if found.count < 2 { return found }
    found.sort()
    var unique: [String] = []
    unique.reserveCapacity(found.count)
    for path in found where unique.last != path { unique.append(path) }
    return unique
  }

  /// The files `patterns` name now with their stats (a missing one has size -1), in
  /// `expand`'s order: what the quick check compares. A plain path is looked at once.
  static func stats(_ patterns: [String]) -> [FileRecord]? {
    var found: [FileRecord] = []
    found.reserveCapacity(patterns.count)
    var info = stat()
    func record(_ path: String) {
      if stat(path, &info) == 0 {
        found.append(
          FileRecord(
            path: path, size: Int64(info.st_size), mtime: FileLook.nanoseconds(info.st_mtim),
            inode: UInt64(info.st_ino), digest: .zero, trusted: false))
      } else {
        found.append(FileRecord(path: path, size: -1, mtime: 0, inode: 0, digest: .zero, trusted: false))
      }
    }
    for pattern in patterns {
      if !isPattern(pattern) {
        if stat(pattern, &info) == 0, info.st_mode & S_IFMT == S_IFDIR {
          guard let paths = expand([pattern]) else { return nil }
          for path in paths { record(path) }
        } else {
          record(pattern)
        }
      } else {
        guard let paths = expand([pattern]) else { return nil }
        for path in paths { record(path) }
      }
      if found.count > maxFiles { return nil }
    }
    if found.count < 2 { return found }
    found.sort { $0.path < $1.path }
    var unique: [FileRecord] = []
    unique.reserveCapacity(found.count)
    for file in found where unique.last?.path != file.path { unique.append(file) }
    return unique
  }

  private static func join(_ folder: String, _ name: some StringProtocol) -> String {
    folder.isEmpty ? String(name) : folder.hasSuffix("/") ? folder + name : folder + "/" + name
  }

  static func isFolder(_ path: String) -> Bool {
    var info = stat()
    return stat(path, &info) == 0 && info.st_mode & S_IFMT == S_IFDIR
  }

  /// The names in a folder (not `.` and `..`), with whether each is a folder (not a link to one).
  private static func entries(_ folder: String) -> [(name: String, isFolder: Bool)] {
    guard let dir = opendir(folder.isEmpty ? "." : folder) else { return [] }
    defer { closedir(dir) }
    var names: [(String, Bool)] = []
    while let entry = readdir(dir) {
      let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
        String(cString: raw.baseAddress!.assumingMemoryBound(to: CChar.self))
      }
      // The run store's own folder is never an input or an output (a run writes it).
      if name == "." || name == ".." || name == RunStore.folderName { continue }
      var kind = entry.pointee.d_type
      if kind == UInt8(DT_UNKNOWN) {
        var info = stat()
        kind = lstat(join(folder, name), &info) == 0 && info.st_mode & S_IFMT == S_IFDIR ? UInt8(DT_DIR) : UInt8(DT_REG)
      }
      names.append((name, kind == UInt8(DT_DIR)))
    }
    return names
  }

  /// Every file below `folder` (links to folders not followed).
  private static func walk(_ folder: String, into found: inout [String]) -> Bool {
    for (name, isFolder) in entries(folder) {
      let path = join(folder, name)
      if isFolder {
        guard walk(path, into: &found) else { return false }
      } else {
        found.append(path)
        if found.count > maxFiles { return false }
      }
    }
    return true
  }

  private static func match(_ folder: String, _ parts: ArraySlice<Substring>, into found: inout [String]) -> Bool {
    guard let part = parts.first else {
      if isFolder(folder) { return walk(folder, into: &found) }
      found.append(folder)
      return true
    }
    let rest = parts.dropFirst()
    if part == "**" {
      // Zero folders, then each folder below at any depth.
      guard match(folder, rest, into: &found) else { return false }
      for (name, isFolder) in entries(folder) where isFolder && !name.hasPrefix(".") {
        guard match(join(folder, name), parts, into: &found) else { return false }
      }
      return true
    }
    if !isPattern(String(part)) {
      let path = join(folder, part)
      var info = stat()
      guard stat(path, &info) == 0 else { return true }
      return rest.isEmpty ? match(path, rest, into: &found) : isFolder(path) ? match(path, rest, into: &found) : true
    }
    let pattern = String(part)
    for (name, isFolder) in entries(folder) where fnmatch(pattern, name, FNM_PERIOD) == 0 {
      if !rest.isEmpty && !isFolder { continue }
      guard match(join(folder, name), rest, into: &found) else { return false }
      if found.count > maxFiles { return false }
    }
    return true
  }
}
