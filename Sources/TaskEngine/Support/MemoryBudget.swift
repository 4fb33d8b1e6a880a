// MemoryBudget: the memory this process can get, and the Lua heap cap taskrun takes by default.
import FoundationEssentials
import Glibc

/// What limits the memory taskrun can get: the address space left under `RLIMIT_AS`, the
/// room left under its cgroup's `memory.max` (the smallest along the path to the root; cgroup
/// v1's `memory.limit_in_bytes` where there is no v2), and physical memory. Without
/// `--memory`, the Lua heap is capped below all three (`defaultLuaHeap`), so a script that
/// fills memory fails with Lua's clean `out of memory` while the host still has room of its
/// own, instead of the process dying on an allocation Swift cannot refuse.
public struct MemoryBudget: Equatable, Sendable {
  /// Bytes of address space left under RLIMIT_AS (nil: no limit).
  public var addressSpaceRoom: Int?
  /// Bytes the cgroup may still charge (nil: no limit, or no cgroup file to read).
  public var cgroupRoom: Int?
  /// Bytes of physical memory (nil: unknown).
  public var physical: Int?

  public init(addressSpaceRoom: Int? = nil, cgroupRoom: Int? = nil, physical: Int? = nil) {
    self.addressSpaceRoom = addressSpaceRoom
    self.cgroupRoom = cgroupRoom
    self.physical = physical
  }

  /// The smallest cap taken by default: a limit tighter than this leaves Lua this much anyway.
  public static let minimumHeap = 16 << 20

  /// Half the address space left (the allocator reserves address space beyond what Lua uses,
  /// a growing table briefly holds its old and new parts, and threads map their stacks there),
  /// three quarters of the cgroup's room and of physical memory; the smallest of these, and
  /// at least `minimumHeap`. Nil when nothing limits the process (no cap).
  public var defaultLuaHeap: Int? {
    // Compared one by one: an array of optionals here was a generic type to instantiate at start-up.
    var smallest: Int?
    func consider(_ cap: Int?) { if let cap, cap < smallest ?? .max { smallest = cap } }
    consider(addressSpaceRoom.map { $0 / 2 })
    consider(cgroupRoom.map { $0 / 4 * 3 })
    consider(physical.map { $0 / 4 * 3 })
    guard let smallest else { return nil }
    return max(Self.minimumHeap, smallest)
  }

  /// The cap for a heap of `asked` bytes (`--memory`; nil: the default): `asked` unless it is
  /// more than the default cap, which is what this process can really get (beyond it the host
  /// would die on an allocation before Lua reached the cap); then the default, and `lowered`.
  public func luaHeap(asked: Int?) -> (bytes: Int, lowered: Bool) {
    guard let asked else { return (defaultLuaHeap ?? 0, false) }
    guard let most = defaultLuaHeap, asked > most else { return (asked, false) }
    return (most, true)
  }

  /// This process's budget now. `proc` and `cgroupRoot` are where /proc and the cgroup
  /// file system are (tests point them at folders of their own).
  public static func current(proc: String = "/proc", cgroupRoot: String = "/sys/fs/cgroup") -> MemoryBudget {
    var budget = MemoryBudget()
    var limit = rlimit()
    if getrlimit(__rlimit_resource_t(RLIMIT_AS.rawValue), &limit) == 0, limit.rlim_cur != rlim_t.max {
      let mapped = (firstNumber(in: proc + "/self/statm") ?? 0) * Int(sysconf(Int32(_SC_PAGESIZE)))
      budget.addressSpaceRoom = max(0, Int(clamping: limit.rlim_cur) - mapped)
    }
    budget.cgroupRoom = cgroupRoom(proc: proc, root: cgroupRoot)
    let pages = sysconf(Int32(_SC_PHYS_PAGES)), size = sysconf(Int32(_SC_PAGESIZE))
    if pages > 0 && size > 0 {
      budget.physical = pages.multipliedReportingOverflow(by: size).overflow ? Int.max : pages * size
    }
    return budget
  }

  /// The least room any cgroup on the process's path leaves (v2: memory.max less
  /// memory.current; v1: memory.limit_in_bytes less memory.usage_in_bytes). Read as bytes:
  /// it runs at every start, where `split` into substrings cost a quarter million instructions.
  static func cgroupRoom(proc: String, root: String) -> Int? {
    guard let bytes = readBytes(proc + "/self/cgroup") else { return nil }
    var room: Int?
    var lineStart = 0
    while lineStart < bytes.count {
      let lineEnd = bytes[lineStart...].firstIndex(of: UInt8(ascii: "\n")) ?? bytes.count
      defer { lineStart = lineEnd + 1 }
      // "hierarchy-id:controllers:path"
      guard let c1 = bytes[lineStart..<lineEnd].firstIndex(of: UInt8(ascii: ":")),
        let c2 = bytes[(c1 + 1)..<lineEnd].firstIndex(of: UInt8(ascii: ":"))
      else { continue }
      let v2 = c1 == lineStart + 1 && bytes[lineStart] == UInt8(ascii: "0") && c2 == c1 + 1
      let v1 = listsMemory(bytes[(c1 + 1)..<c2])
      guard v2 || v1 else { continue }
      let path = String(decoding: bytes[(c2 + 1)..<lineEnd], as: UTF8.self)
      let base = v2 ? root : root + "/memory"
      let (limitFile, usageFile) =
        v2 ? ("memory.max", "memory.current") : ("memory.limit_in_bytes", "memory.usage_in_bytes")
      // Every folder from the process's own up to the root: a parent's limit binds too.
      var folder = path.hasPrefix("/") ? path : "/" + path
      while true {
        let dir = base + (folder == "/" ? "" : folder)
        // v1 writes "no limit" as a number near 2^63.
        if let limit = firstNumber(in: dir + "/" + limitFile), limit < 1 << 60 {
          let used = firstNumber(in: dir + "/" + usageFile) ?? 0
          room = min(room ?? .max, max(0, limit - used))
        }
        if folder == "/" || folder.isEmpty { break }
        folder = String(folder[..<(folder.lastIndex(of: "/") ?? folder.startIndex)])
        if folder.isEmpty { folder = "/" }
      }
    }
    return room
  }

  /// Whether a comma-separated controller list names `memory`.
  private static func listsMemory(_ list: ArraySlice<UInt8>) -> Bool {
    let memory: [UInt8] = Array("memory".utf8)
    var start = list.startIndex
    while start <= list.endIndex {
      let end = list[start...].firstIndex(of: UInt8(ascii: ",")) ?? list.endIndex
      if list[start..<end].elementsEqual(memory) { return true }
      start = end + 1
    }
    return false
  }

  /// The first whitespace-separated word of a file, as a whole number ("max" is nil).
  static func firstNumber(in path: String) -> Int? {
    guard let bytes = readBytes(path) else { return nil }
    var value = 0, digits = 0
    for byte in bytes {
      if byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\n") { break }
      guard byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") else { return nil }
      let (times, o1) = value.multipliedReportingOverflow(by: 10)
      let (sum, o2) = times.addingReportingOverflow(Int(byte - UInt8(ascii: "0")))
      if o1 || o2 { return nil }
      value = sum
      digits += 1
    }
    return digits > 0 ? value : nil
  }

  static func readText(_ path: String) -> String? {
    readBytes(path).map { String(decoding: $0, as: UTF8.self) }
  }

  /// A file's bytes (at most 1 MiB; nil if it cannot be opened).
  static func readBytes(_ path: String) -> [UInt8]? {
    let fd = open(path, O_RDONLY | O_CLOEXEC)
    guard fd >= 0 else { return nil }
    defer { close(fd) }
    var bytes: [UInt8] = []
    var buffer = [UInt8](repeating: 0, count: 4096)
    while bytes.count < 1 << 20 {
      let n = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
      if n < 0 && errno == EINTR { continue }
      guard n > 0 else { break }
      bytes += buffer[..<n]
    }
    return bytes
  }
}
