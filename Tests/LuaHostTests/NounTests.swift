import TaskEngine
// Each handle kind's noun is what Lua sees: every declared field reads, only setters write, methods check self.
import Testing

@testable import LuaHost

@Suite struct NounTests {
  /// A host with one handle of each kind in globals `op`, `q` and `p`.
  static func host() throws -> ScriptHost {
    let host = ScriptHost(scheduler: Scheduler(clock: ManualClock(), jobs: 1))
    try host.execute(
      source: "op = operation { name = 'x' }; q = queue { name = 'w' }; p = progress { total = 4 }",
      name: "@nouns.lua")
    return host
  }

  static let handles: [(HandleKind, String)] = [(.operation, "op"), (.queue, "q"), (.progress, "p")]

  @Test func everyDeclaredFieldAndMethodReads() throws {
    let host = try Self.host()
    for (kind, variable) in Self.handles {
      let noun = host.noun(kind)
      let names = (noun.readable + noun.methodNames).map { "'\($0)'" }.joined(separator: ", ")
      // Reading a declared name never raises; a name close to one raises with a hint.
      try host.execute(
        source: """
          for _, k in ipairs { \(names) } do local _ = \(variable)[k] end
          local ok, err = pcall(function() return \(variable).\(noun.readable[0])x end)
          assert(not ok and err:find("has no field '\(noun.readable[0])x'; did you mean '\(noun.readable[0])'", 1, true), err)
          """, name: "=\(variable)")
    }
  }

  @Test func onlyFieldsWithSettersCanBeSet() throws {
    let host = try Self.host()
    #expect(host.noun(.operation).settable == ["priority"])
    #expect(host.noun(.queue).settable == ["max_concurrent", "suspended"])
    for (kind, variable) in Self.handles {
      let noun = host.noun(kind)
      let readOnly = noun.readable.filter { !noun.settable.contains($0) }.map { "'\($0)'" }.joined(separator: ", ")
      try host.execute(
        source: """
          for _, k in ipairs { \(readOnly) } do
            local ok, err = pcall(function() \(variable)[k] = 1 end)
            assert(not ok and err:find(k, 1, true), k .. " was set: " .. tostring(err))
          end
          """, name: "=\(variable)")
    }
    try host.execute(
      source: """
        q.max_concurrent = 3; q.suspended = true
        assert(q.max_concurrent == 3 and q.suspended)
        p.completed = 2; p.description = "half"
        assert(p.completed == 2 and p.description == "half")
        local ok, err = pcall(function() p.fraction = 1 end)
        assert(not ok and err:find("progress: 'fraction' is read-only", 1, true), err)
        ok, err = pcall(function() q.count = 1 end)
        assert(not ok and err:find("queue 'w': 'count' cannot be set (settable: max_concurrent, suspended)", 1, true), err)
        """, name: "=set")
  }

  @Test func methodsCalledWithADotSayHowToCallThem() throws {
    let host = try Self.host()
    try host.execute(
      source: """
        for _, case in ipairs { { op.why, "operation", "op:why" }, { q.suspend, "queue", "q:suspend" },
                                { p.pause, "progress", "p:pause" } } do
          local ok, err = pcall(case[1], 42)
          assert(not ok and err:find("(" .. case[2] .. " expected, got number; use " .. case[3] .. "(...))", 1, true), err)
        end
        """, name: "=self")
  }

  @Test func descriptionsComeFromTheNoun() throws {
    let host = try Self.host()
    try host.execute(
      source: """
        assert(tostring(op) == "<operation x: pending>", tostring(op))
        assert(tostring(q) == "<queue w: 0 operations, 0 running, unlimited>", tostring(q))
        assert(tostring(p):find("^<progress 0 of 4: "), tostring(p))
        """, name: "=describe")
  }

  @Test func boxesOfOneKindAreNotTakenForTheOther() throws {
    // Conditions and observers share BoxRegistry; a box of one is never a value of the other.
    #expect(
      loadError("operation { name = 'a', observers = { mutex('m') } }")?.contains("observers are made by") == true)
    #expect(
      loadError("operation { name = 'a', conditions = { activity('x') } }")?.contains("conditions are made by") == true)
    #expect(
      loadError(
        """
        local fake = setmetatable({}, { __index = function() return 'm' end })
        operation { name = 'a', conditions = { fake } }
        """)?.contains("conditions are made by") == true)
    let host = try runLua(
      """
      seen = {}
      local o = observer { on_start = function(op) seen[#seen + 1] = op.name end }
      operation { name = 'a', observers = { o, activity('build') }, conditions = { mutex('m'), negate(exists('/nonexistent')) } }
      """)
    try host.check("assert(seen[1] == 'a' and #seen == 1, #seen)")
    #expect(host.op("a").succeeded)
    #expect(host.op("a").activities == ["build"])
  }
}
