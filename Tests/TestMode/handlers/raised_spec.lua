-- What a test raises reaches a handler as it was raised (busted's debug.message).
describe("raised", function()
  it("a table", function() error({ code = 1 }) end)
  it("a number", function() error(42) end)
  it("at level 0", function() error("plain", 0) end)
  it("an assertion", function() assert.is_true(false) end)
end)
