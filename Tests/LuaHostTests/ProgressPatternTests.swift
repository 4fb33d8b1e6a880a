// operation{}'s check of progress patterns agrees with Lua: random patterns, matched by Lua's
// own string.find against many subjects, and declared as progress patterns.
import LuaHost
import TestSupport
import Testing

@Suite struct ProgressPatternTests {
  /// Whenever Lua raises for a pattern on some subject, operation{} refuses it with Lua's
  /// message; a pattern operation{} accepts never makes Lua raise.
  @Test func theCheckAgreesWithLuaOnRandomPatterns() throws {
    var random = SplitMix64.seeded(by: "TASKRUN_PATTERN_SEED", for: "theCheckAgreesWithLuaOnRandomPatterns")
    let alphabet = [
      "(", ")", "()", "%", "[", "]", "^", "$", ".", "*", "+", "-", "?", "a", "b", "1", "2", "0",
      "%b", "%f", "%f[", "%d", "%1", "[^"
    ]
    let patterns = (0..<2000).map { _ in (0..<random.int(1...7)).map { _ in random.pick(alphabet) }.joined() }
    let letters = Array("ab12()[]%^$-.")
    let subjects = [""] + (0..<24).map { _ in String((0..<random.int(1...8)).map { _ in random.pick(letters) }) }
    func list(_ items: [String]) -> String { "{ " + items.map { "[==[\($0)]==]" }.joined(separator: ", ") + " }" }
    try runLua(
      """
      local patterns, subjects = \(list(patterns)), \(list(subjects))
      local failures, refused, raised = {}, 0, 0
      for i, pattern in ipairs(patterns) do
        local lua
        for _, subject in ipairs(subjects) do
          local ok, message = pcall(string.find, subject, pattern)
          if not ok then lua = message break end
        end
        local ok, ours = pcall(operation, { name = "p" .. i, sh = "true", progress = pattern })
        if ok then ours:cancel() else refused = refused + 1 end
        local malformed = not ok and ours:match("field 'progress': (.-) in \\"") or nil
        if lua then
          raised = raised + 1
          if malformed ~= lua then failures[#failures + 1] = pattern .. " -> lua: " .. lua .. "; ours: " .. tostring(ours) end
        end
      end
      assert(#failures == 0, table.concat(failures, "\\n"))
      assert(raised > 100 and refused > raised, raised .. " raised, " .. refused .. " refused")
      """)
  }
}
