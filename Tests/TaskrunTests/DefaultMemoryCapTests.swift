// Without --memory, the Lua heap is capped below what the process can get (ulimit -v here).
import Foundation
import Testing

/// Without --memory, the Lua heap is capped below what the process can get, so a script that
/// fills memory fails its operation with Lua's out of memory instead of killing taskrun.
@Suite struct DefaultMemoryCapTests {
  @Test func aBodyFillingTheAddressSpaceFailsAndTheRunGoesOn() throws {
    let run = try ScriptRun.run(
      """
      operation { name = "hog", run = function() local t = {} for i = 1, 1e9 do t[i] = ("x"):rep(100) .. i end end }
      operation { name = "tables", run = function() local t = {} for i = 1, 1e9 do t[i] = { i } end end }
      operation { name = "after", after = { "hog", "tables" }, when = "finished", run = function() print("after ran") end }
      """, ["-k", "-j1"], shell: "ulimit -v 800000;", timeout: 120)
    // Before the default cap, small allocations filled the address space and Swift aborted (134).
    #expect(run.status == 1, "\(run.stdout)\(run.stderr)")
    for name in ["hog", "tables"] {
      #expect(run.stderr.contains("FAILED    \(name)"), "\(name): \(run.stderr)")
    }
    #expect(run.stderr.contains("out of memory: the Lua heap reached its limit of "), "\(run.stderr)")
    #expect(run.stderr.contains("MB (taskrun's default for this process; --memory sets it)"), "\(run.stderr)")
    #expect(run.stdout.contains("after ran"), "the run did not go on: \(run.stdout)")
  }
}
