// MemoryBudget: the room the process has, read from fake /proc and cgroup folders, and the default Lua heap cap.
import Foundation
import TaskEngine
import TestSupport
import Testing

@Suite struct MemoryBudgetTests {
  /// A fake /proc (only self/cgroup) and cgroup root; `files` maps paths under the root to contents.
  func fake(cgroup: String, _ files: [String: String]) throws -> (proc: String, root: String) {
    let base = Scratch.root.appendingPathComponent("taskrun-budget-\(UUID().uuidString)")
    let proc = base.appendingPathComponent("proc"), root = base.appendingPathComponent("cgroup")
    try FileManager.default.createDirectory(at: proc.appendingPathComponent("self"), withIntermediateDirectories: true)
    try cgroup.write(to: proc.appendingPathComponent("self/cgroup"), atomically: true, encoding: .utf8)
    for (path, text) in files {
      let file = root.appendingPathComponent(path)
      try FileManager.default.createDirectory(at: file.deletingLastPathComponent(), withIntermediateDirectories: true)
      try text.write(to: file, atomically: true, encoding: .utf8)
    }
    return (proc.path, root.path)
  }

  @Test func theTightestCgroupOnThePathLimits() throws {
    // The process's own group allows 800 MB more, its parent only 400 MB more.
    let (proc, root) = try fake(
      cgroup: "0::/a/b\n",
      [
        "a/b/memory.max": "1000000000\n", "a/b/memory.current": "200000000\n",
        "a/memory.max": "500000000\n", "a/memory.current": "100000000\n",
        "memory.max": "max\n"
      ])
    let budget = MemoryBudget.current(proc: proc, cgroupRoot: root)
    #expect(budget.cgroupRoom == 400_000_000)
    #expect(budget.defaultLuaHeap.map { $0 <= 300_000_000 } == true)
  }

  @Test func cgroupV1AndNoLimitAtAll() throws {
    let v1 = try fake(
      cgroup: "7:cpu:/\n5:memory,foo:/job\n",
      [
        "memory/job/memory.limit_in_bytes": "104857600\n", "memory/job/memory.usage_in_bytes": "4857600\n"
      ])
    #expect(MemoryBudget.current(proc: v1.proc, cgroupRoot: v1.root).cgroupRoom == 100_000_000)
    let unlimited = try fake(cgroup: "5:memory:/\n", ["memory/memory.limit_in_bytes": "9223372036854771712\n"])
    #expect(MemoryBudget.current(proc: unlimited.proc, cgroupRoot: unlimited.root).cgroupRoom == nil)
    let v2max = try fake(cgroup: "0::/u\n", ["u/memory.max": "max\n"])
    #expect(MemoryBudget.current(proc: v2max.proc, cgroupRoot: v2max.root).cgroupRoom == nil)
  }

  @Test(arguments: [
    (MemoryBudget(addressSpaceRoom: 1_400_000_000, physical: 64 << 30), 700_000_000),
    (MemoryBudget(cgroupRoom: 400_000_000, physical: 64 << 30), 300_000_000),
    (MemoryBudget(physical: 8 << 30), 6 << 30),
    (MemoryBudget(addressSpaceRoom: 1 << 20, physical: 8 << 30), MemoryBudget.minimumHeap)
  ])
  func theDefaultCapIsBelowTheSmallestRoom(_ budget: MemoryBudget, _ cap: Int) {
    #expect(budget.defaultLuaHeap == cap)
  }

  @Test func nothingLimitsNothingCaps() {
    #expect(MemoryBudget().defaultLuaHeap == nil)
  }

  /// `--memory` is taken as asked up to the default cap, and lowered to it beyond.
  @Test func anAskedHeapIsLoweredToWhatTheProcessCanGet() {
    let budget = MemoryBudget(addressSpaceRoom: 1_400_000_000, physical: 64 << 30)
    #expect(budget.luaHeap(asked: 100 << 20) == (100 << 20, false))
    #expect(budget.luaHeap(asked: 1_048_576 << 20) == (700_000_000, true))
    #expect(budget.luaHeap(asked: nil) == (700_000_000, false))
    #expect(MemoryBudget().luaHeap(asked: 1_048_576 << 20) == (1_048_576 << 20, false))
  }
}
