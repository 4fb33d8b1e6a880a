-- Each file is insulated, as in busted: globals and modules it loads do not reach the next.
package.preload["taskrun_spec_counter"] = function() return { count = 0 } end
FROM_FILE_A = true

describe("file isolation, first file", function()
  it("sets a global and changes a module", function()
    local counter = require "taskrun_spec_counter"
    counter.count = counter.count + 1
    assert.is_true(FROM_FILE_A)
    assert.are.equal(1, counter.count)
  end)
end)

expose("an exposed block", function()
  EXPOSED_BY_FILE_A = true
  it("sets a global that outlives the file", function() assert.is_true(EXPOSED_BY_FILE_A) end)
end)
