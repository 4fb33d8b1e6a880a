-- Ctrl-C while the second test sleeps: the first passed, the second is interrupted, and the
-- two after it never start.
describe("interrupted", function()
  it("passes", function() end)
  it("sleeps", function() print("sleeping now"); sleep(30) end)
  it("never starts", function() end)
  it("never starts either", function() end)
end)
