-- A failure between two passing tests, for --no-keep-going.
describe("K", function()
  it("k1", function() end)
  it("k2 fails", function() assert.is_true(false) end)
  it("k3", function() end)
end)
