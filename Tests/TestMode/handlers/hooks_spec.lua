-- Errors outside tests, for the output handler comparisons: hooks that fail.
describe("a failing before_each", function()
  before_each(function() error("before") end)
  it("does not count", function() end)
end)

describe("a failing after_each", function()
  after_each(function() error("after") end)
  it("still passes", function() end)
end)

describe("a failing setup", function()
  setup(function() error("setup") end)
  it("never runs", function() end)
end)
