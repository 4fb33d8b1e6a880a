-- Runs after isolation_a_spec.lua (files run in sorted order).
describe("file isolation, second file", function()
  it("does not see the first file's global", function()
    assert.is_nil(FROM_FILE_A)
  end)
  it("sees what the first file exposed", function()
    assert.is_true(EXPOSED_BY_FILE_A)
  end)
  it("gets a fresh copy of modules the first file loaded", function()
    package.preload["taskrun_spec_counter"] = package.preload["taskrun_spec_counter"]
      or function() return { count = 0 } end
    assert.are.equal(0, require("taskrun_spec_counter").count)
  end)
end)
