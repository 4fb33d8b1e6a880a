-- A test that never ends by itself, and one after it that must still run.
describe("runaway", function()
  it("spins", function() while true do end end)
  it("naps", function() sleep(60) end)
  it("still runs", function() assert.is_true(true) end)
end)
