// --sandbox: an untrusted script keeps Lua, sh and reading the time, and loses the rest.
import Foundation
import Testing

@Suite struct SandboxTests {
  @Test func theSandboxRemovesExactlyWhatTheREADMESays() throws {
    let w = try MarkedWorkflow { _ in
      """
      for _, name in ipairs { "io", "package", "debug", "dofile", "loadfile", "require" } do
        assert(_G[name] == nil, name .. " is still there")
      end
      local kept = {}
      for name in pairs(os) do kept[#kept + 1] = name end
      table.sort(kept)
      assert(table.concat(kept, " ") == "clock date difftime getenv time", table.concat(kept, " "))
      assert(load("return 1 + 1")() == 2)
      local f, message = load(string.dump(function() end))
      assert(f == nil and message:find("binary chunk"), message)
      local env = {}
      load("x = 5", "chunk", "t", env)()
      assert(env.x == 5 and x == nil)
      assert(sh("echo via sh").stdout == "via sh\\n")
      operation { name = "ran", sh = "true" }
      """
    }
    let run = Binary.finish(try w.start(["--sandbox", "--memory", "64"]), timeout: 30)
    #expect(run.status == 0 && run.stdout.contains("ok        ran"), "\(run.stdout)\(run.stderr)")
  }

  @Test func withoutTheSandboxEverythingIsThere() throws {
    let w = try MarkedWorkflow { _ in "assert(io and os.execute and debug and require)" }
    let run = Binary.finish(try w.start(), timeout: 30)
    #expect(run.status == 0, "\(run.stderr)")
  }
}
