// FileWatcher: inotify on the folders of a watch set; what changed there, as paths, on the scheduler's thread.
import Glibc

/// Watches folders (never single files: an editor that saves by writing a new file and
/// renaming it over the old one replaces the inode a file watch would hold) and reports the
/// paths of the entries that were written, made, removed or renamed there, as the watch set
/// says they matter. It outlives the runs of `taskrun -w`: each cycle's scheduler watches its
/// descriptor (`attach`), and the folders are watched again after each cycle (`watch`), so a
/// folder removed and made again is found again.
public final class FileWatcher: DescriptorSource {
  private let fd: Int32
  /// Folders by watch descriptor, and the other way round.
  private var folders: [Int32: String] = [:]
  private var descriptors: [String: Int32] = [:]
  /// What matters (set by `watch`).
  private var set = WatchSet.empty
  /// Paths seen changed since the last `take`; `overflowed`: the kernel dropped events.
  private var changed: Set<String> = []
  private var overflowed = false
  /// Called on the scheduler's thread when something that matters changed (the first change
  /// after a `take`, and each one after).
  public var onChange: () -> Void = {}
  private var service = 0
  private weak var loop: EventLoop?
  private var buffer = [UInt8](repeating: 0, count: 64 << 10)

  /// Paths kept between two `take`s; past it, the change reads as "more changes than …".
  static let maxChanges = 10_000

  static let mask = UInt32(
    IN_CLOSE_WRITE | IN_CREATE | IN_DELETE | IN_MOVED_FROM | IN_MOVED_TO | IN_ATTRIB | IN_DELETE_SELF
      | IN_MOVE_SELF | IN_ONLYDIR | IN_EXCL_UNLINK)

  public init() throws(WatchError) {
    fd = inotify_init1(Int32(IN_NONBLOCK | IN_CLOEXEC))
    guard fd >= 0 else { throw WatchError("cannot watch files: inotify: \(String(cString: strerror(errno)))") }
  }

  deinit { close(fd) }

  /// Whether anything changed since the last `take`.
  public var hasChanges: Bool { !changed.isEmpty || overflowed }

  /// What changed since the last `take`, sorted, left to be taken.
  public var pending: [String] { changed.sorted() }

  /// What changed since the last call, sorted (an overflow reads as "many files").
  public func take() -> [String] {
    var paths = changed.sorted()
    if overflowed { paths.insert("(more changes than could be kept)", at: 0) }
    (changed, overflowed) = ([], false)
    return paths
  }

  /// What `watch` could not do: folders it could not watch and why (missing ones are
  /// watched through their parent), and whether roots held more folders than are watched.
  public struct Shortfall: Equatable, Sendable {
    public var refused: [(folder: String, reason: String)] = []
    public var capped = false
    public var isEmpty: Bool { refused.isEmpty && !capped }
    public init() {}
    public static func == (a: Shortfall, b: Shortfall) -> Bool {
      a.capped == b.capped && a.refused.map(\.folder) == b.refused.map(\.folder)
    }
  }

  /// Watches what `set` names from now on: its folders, and every folder below its roots.
  @discardableResult
  public func watch(_ set: WatchSet) -> Shortfall {
    self.set = set
    var wanted = Set(set.folders)
    var shortfall = Shortfall()
    for root in set.roots { collect(root, into: &wanted, depth: 0, capped: &shortfall.capped) }
    for (folder, wd) in descriptors where !wanted.contains(folder) {
      inotify_rm_watch(fd, wd)
      descriptors[folder] = nil
      folders[wd] = nil
    }
    for folder in wanted.sorted() where descriptors[folder] == nil {
      if !add(folder) && errno != ENOENT && errno != ENOTDIR {
        let reason =
          errno == ENOSPC
          ? "the system's limit of inotify watches (raise fs.inotify.max_user_watches)"
          : String(cString: strerror(errno)).lowercased()
        shortfall.refused.append((folder, reason))
      }
    }
    return shortfall
  }

  /// The number of folders watched.
  public var count: Int { descriptors.count }

  /// Has `scheduler`'s loop watch the descriptor and hand changes to `onChange`.
  public func attach(to scheduler: Scheduler) {
    loop = scheduler.loop
    service = scheduler.loop.register { [weak self] _ in self?.onChange() }
    scheduler.loop.watch(self)
  }

  private func add(_ folder: String) -> Bool {
    let wd = inotify_add_watch(fd, folder, Self.mask)
    guard wd >= 0 else { return false }
    if let old = folders[wd], old != folder { descriptors[old] = nil }  // the same folder by another name
    folders[wd] = folder
    descriptors[folder] = wd
    return true
  }

  /// `folder` and the folders below it (links not followed; at most `WatchSet.maxFolders`,
  /// past which `capped` is set; /proc, /sys and /dev never).
  private func collect(_ folder: String, into found: inout Set<String>, depth: Int, capped: inout Bool) {
    guard depth < 64, !WatchSet.isPseudo(folder) else { return }
    guard found.count < WatchSet.maxFolders else { return capped = true }
    var info = stat()
    guard lstat(folder, &info) == 0, info.st_mode & S_IFMT == S_IFDIR else { return }
    found.insert(folder)
    guard let dir = opendir(folder) else { return }
    defer { closedir(dir) }
    while let entry = readdir(dir) {
      let type = entry.pointee.d_type
      guard type == DT_DIR || type == DT_UNKNOWN else { continue }
      let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
      if name == "." || name == ".." || name == ".taskrun" { continue }
      collect(folder == "/" ? "/" + name : folder + "/" + name, into: &found, depth: depth + 1, capped: &capped)
    }
  }

  // MARK: DescriptorSource

  public func watch(_ fds: inout [pollfd]) -> Double? {
    fds.append(pollfd(fd: fd, events: Int16(POLLIN), revents: 0))
    return nil
  }

  public func handle(_ fds: [pollfd], from first: Int) {
    guard first < fds.count, fds[first].fd == fd, fds[first].revents != 0 else { return }
    var found = false
    while true {
      let n = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
      guard n > 0 else { break }
      var offset = 0
      while offset + MemoryLayout<inotify_event>.size <= n {
        let (wd, mask, length) = buffer.withUnsafeBytes { raw in
          let event = raw.loadUnaligned(fromByteOffset: offset, as: inotify_event.self)
          return (event.wd, event.mask, Int(event.len))
        }
        let nameStart = offset + MemoryLayout<inotify_event>.size
        let name = String(
          decoding: buffer[nameStart..<min(n, nameStart + length)].prefix { $0 != 0 }, as: UTF8.self)
        offset = nameStart + length
        if mask & UInt32(IN_Q_OVERFLOW) != 0 {
          overflowed = true
          found = true
          continue
        }
        guard let folder = folders[wd] else { continue }
        if mask & UInt32(IN_IGNORED) != 0 {
          folders[wd] = nil
          if descriptors[folder] == wd { descriptors[folder] = nil }
          continue
        }
        if mask & UInt32(IN_DELETE_SELF | IN_MOVE_SELF) != 0 {
          if set.matters(folder, isFolder: true) { changed.insert(folder); found = true }
          continue
        }
        guard !name.isEmpty else { continue }
        let path = folder == "/" ? "/" + name : folder + "/" + name
        let isFolder = mask & UInt32(IN_ISDIR) != 0
        // A folder made (or moved in) below a root is watched at once, with what is below it.
        if isFolder, mask & UInt32(IN_CREATE | IN_MOVED_TO) != 0, set.isBelowRoot(path) {
          var more = Set<String>(), capped = false
          collect(path, into: &more, depth: 0, capped: &capped)
          for folder in more where descriptors[folder] == nil { _ = add(folder) }
        }
        if set.matters(path, isFolder: isFolder) {
          // A flood (a tool that writes a million files) is remembered as one, not path by path.
          if changed.count < Self.maxChanges { changed.insert(path) } else { overflowed = true }
          found = true
        }
      }
    }
    // One message per burst read: the loop takes every path at its turn (and waits for quiet).
    if found, let loop { loop.inbox.post(.completion(token: service, answer: nil)) }
  }
}

/// Why files cannot be watched.
public struct WatchError: Error, CustomStringConvertible {
  public let description: String
  public init(_ description: String) { self.description = description }
}
