-- Run with --helper snapshot_helper.lua.
local t = { f = function() return "real" end }
describe("with a helper that reverts stubs", function()
  it("stubs", function()
    stub(t, "f").returns("fake")
    assert.are.equal("fake", t.f())
  end)
  it("finds them reverted", function() assert.are.equal("real", t.f()) end)
  it("ran the suite's before_each before each test", function() assert.are.equal(3, BEFORE_EACH_COUNT) end)
end)
