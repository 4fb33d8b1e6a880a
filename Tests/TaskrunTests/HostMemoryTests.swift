// Objects taskrun makes for a script (operations, resources, …) count against the Lua heap cap.
import Foundation
import Testing

/// Filling memory with taskrun's own objects used to abort the host (`failed to allocate 184
/// bytes`, exit 134): only Lua's blocks counted against the cap, and the nodes, names and
/// lists the host keeps for each operation or resource filled the rest of the address space.
/// Now each is charged to the same cap: the operation (or the load) fails with out of memory.
@Suite struct HostMemoryTests {
  static let limit = "ulimit -v 800000;"

  @Test func bodiesMakingOperationsAndResourcesFailAndTheRunGoesOn() throws {
    let run = try ScriptRun.run(
      """
      operation { name = "ops", run = function() local t = {} for i = 1, 1e9 do t[i] = operation { name = "p" .. i, run = function() end } end end }
      operation { name = "resources", run = function() local t = {} for i = 1, 1e9 do t[i] = resource("r" .. i, 2) end end }
      operation { name = "after", after = { "ops", "resources" }, when = "finished", run = function() print("after ran") end }
      """, ["-k", "-j1", "-q", "--progress", "none"], shell: Self.limit, timeout: 300)
    #expect(run.status == 1, "\(run.stdout)\(run.stderr.suffix(2000))")
    for name in ["ops", "resources"] {
      #expect(
        run.stderr.contains("\(name): out of memory: the Lua heap reached its limit of "),
        "\(name): \(run.stderr.suffix(2000))")
    }
    #expect(run.stdout.contains("after ran"), "the run did not go on: \(run.stdout)")
  }

  @Test(arguments: ["operation { name = 'p' .. i }", "resource('r' .. i, 2)"])
  func theTopLevelMakingThemFailsTheLoad(_ make: String) throws {
    let run = try ScriptRun.run(
      "local t = {} for i = 1, 1e9 do t[i] = \(make) end", ["-q"], shell: Self.limit, timeout: 300)
    #expect(run.status == 2, "\(run.stdout)\(run.stderr.suffix(2000))")
    #expect(
      run.stderr.contains("taskrun: out of memory: the Lua heap reached its limit of "), "\(run.stderr.suffix(2000))")
  }

  /// A creation that fails makes nothing, and gives its charge back.
  @Test func failedCreationsAreNotCharged() throws {
    let run = try ScriptRun.run(
      """
      operation { name = "a" }
      queue { name = "q" }
      for i = 1, 100000 do
        assert(not pcall(operation, { name = "a" }))
        assert(not pcall(queue, { name = "q" }))
        assert(not pcall(operation, { name = "b" .. i, after = 42 }))
      end
      print("done")
      """, ["--memory", "16"])
    #expect(run.status == 0, "\(run.stdout)\(run.stderr)")
    #expect(run.stdout.contains("done"), "\(run.stdout)\(run.stderr)")
  }

  @Test func memoryBeyondWhatTheProcessCanGetIsLowered() throws {
    let run = try ScriptRun.run(
      """
      operation { name = "hog", run = function() local t = {} for i = 1, 1e9 do t[i] = { i } end end }
      """, ["--memory", "1048576"], shell: Self.limit, timeout: 300)
    #expect(run.status == 1, "\(run.stdout)\(run.stderr.suffix(2000))")
    #expect(
      run.stderr.contains("taskrun: note: --memory 1048576 MB is more than this process can get"), "\(run.stderr)")
    #expect(
      run.stderr.contains("hog (") && run.stderr.contains("out of memory: the Lua heap reached its limit of "),
      "\(run.stderr)")
  }
}
