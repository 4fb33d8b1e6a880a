describe("unfinished", function()
  it("never closes", function()
end)
