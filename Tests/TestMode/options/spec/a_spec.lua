describe("a", function()
  it("passes", function() end)
  it("sees the helper's arguments when there is one", function()
    if HELPER_ARGS then assert.are.equal("one,two", HELPER_ARGS) end
  end)
  it("finds modules on --lpath when one is given", function()
    if os.getenv("EXPECT_LPATH") then assert.are.equal("from lib", require("libmod")) end
  end)
end)
