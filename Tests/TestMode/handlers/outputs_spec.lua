-- The fixture of output handler comparisons: one of each outcome, in one file.
describe("outputs", function()
  it("passes", function()
    assert.is_true(true)
  end)

  it("fails", function()
    assert.are.equal(1, 2)
  end)

  it("errors", function()
    error("broken")
  end)

  pending("is pending")

  it("is pending inside", function()
    pending("later")
  end)

  describe("nested", function()
    it("passes too", function() end)
  end)
end)

describe("a describe that errors", function()
  error("in the body")
end)
