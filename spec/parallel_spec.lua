-- Tests tagged #parallel may overlap while they wait; the next untagged test waits for them.
local log = {}

describe("parallel tests", function()
  it("first #parallel", function()
    log[#log + 1] = "first starts"
    sleep(0.05)
    log[#log + 1] = "first ends"
  end)
  it("second #parallel", function()
    log[#log + 1] = "second starts"
    sleep(0.05)
    log[#log + 1] = "second ends"
  end)
  it("a serial test runs after both", function()
    assert.are.same({ "first starts", "second starts", "first ends", "second ends" }, log)
  end)
end)
