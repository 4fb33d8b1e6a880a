-- With --lazy, setup runs only for a block one of whose tests runs.
describe("lazy", function()
  setup(function() print("SETUP RAN") end)
  it("skipped #skip", function() end)
end)
