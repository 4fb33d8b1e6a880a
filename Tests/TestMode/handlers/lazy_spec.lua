-- A setup that fails: strict_setup, or lazy_setup under --lazy, in what a handler is told.
describe("lazy", function()
  setup(function() error("no") end)
  it("runs", function() end)
end)
