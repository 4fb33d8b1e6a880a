-- A Lua spec beside the .moon one: the lua loader takes it.
describe("a lua spec", function()
  it("passes", function() assert.is_true(true) end)
end)
