describe("fine", function()
  it("runs although another file is broken", function() end)
end)
