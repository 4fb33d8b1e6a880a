import LuaHost
import TaskEngine
// group{} from Lua.
import Testing

@Suite struct GroupAPITests {
  @Test func childrenRunInsideTheirGroupAndDependentsWaitForAllOfThem() throws {
    let host = try runLua(
      """
      order = {}
      local function step(name, seconds) return operation { name = name, run = function() sleep(seconds) order[#order + 1] = name end } end
      prepare = step("prepare", 1)
      fetch = group { name = "fetch", after = { prepare }, step("lua", 2), step("collections", 1) }
      fetch:add(step("parser", 3))
      build = operation { name = "build", after = { fetch }, run = function() order[#order + 1] = "build" end }
      assert(#fetch.children == 3 and fetch.children[3].group == fetch)
      """, jobs: 8)
    try host.check(
      "assert(table.concat(order, ',') == 'prepare,collections,lua,parser,build', table.concat(order, ','))")
    #expect(host.op("build").startTime == 4)
    #expect(host.op("fetch").progress.isFinished)
  }

  @Test func aFailedChildFailsTheGroupAndItsConditionsComeFirst() throws {
    let host = try runLua(
      """
      checked = false
      gate = condition { name = "gate", evaluate = function() checked = true return true end }
      g = group { name = "g", conditions = { gate },
        operation { name = "bad", run = function() assert(checked, "the condition ran first") error("boom") end } }
      """)
    #expect(host.op("g").error == "'bad' failed: spec.lua:4: boom")
  }

  @Test func operationsProducedInsideAGroupBelongToIt() throws {
    let host = try runLua(
      """
      g = group { name = "g", operation { name = "producer", run = function()
        operation { name = "produced", run = function() sleep(2) end }
      end } }
      after_g = operation { name = "after", after = { g } }
      """)
    #expect(host.op("produced").group === host.op("g"))
    #expect(host.op("after").startTime == 2, "the group waited for what its child produced")
  }

  @Test func groupErrors() {
    #expect(
      loadError("group { name = 'g', 'not an op' }")
        == "spec.lua:1: group 'g': children must be operations (got string)")
    #expect(
      loadError("group { name = 'g', sh = 'true' }")
        == "spec.lua:1: group 'g': unknown field 'sh' (valid fields: name, after, queue, priority, when, conditions, timeout, observers, weight, desc, and the children as a list)"
    )
    #expect(
      loadError("local a = operation { name = 'a' } group { a } group { a }")
        == "spec.lua:1: 'a' is already in group 'op2'")
    #expect(
      loadError("local a = operation { name = 'a' } a:add(operation {})") == "spec.lua:1: add: 'a' is not a group")
  }
}
