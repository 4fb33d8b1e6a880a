-- busted's semantics, test by test: compared with busted itself (BustedCompatTests).
package.path = "./lib/?.lua;" .. package.path
local plain = require "plain"

describe("environments", function()
  it("a required module sees Lua's assert and no describe", function()
    assert.is_true(plain.assert_is_lua_s())
    assert.is_true(plain.describe_is_hidden())
  end)
  it("a module's error() is an error, not a failure", function()
    assert.has_error(function() plain.check("x") end)
  end)
  FILE_LEVEL = "set in a describe"
  it("a describe's global is seen by its tests", function() assert.are.equal("set in a describe", FILE_LEVEL) end)
  it("a test's global stays in the test", function() TEST_LEVEL = 1 end)
  it("and is gone in the next one", function() assert.is_nil(TEST_LEVEL) end)
end)

describe("outside the describe", function()
  it("its global is not seen", function() assert.is_nil(FILE_LEVEL) end)
end)

describe("a failing before_each", function()
  before_each(function() error("before_each broke") end)
  after_each(function() AFTER_RAN = true end)
  it("keeps the test from counting", function() end)
  it("for every test", function() end)
end)

describe("a failing after_each", function()
  after_each(function() assert.is_true(false) end)
  it("still lets the test pass", function() end)
end)

describe("a failing setup", function()
  setup(function() error("setup broke") end)
  teardown(function() end)
  it("keeps its tests from running", function() end)
end)

describe("a failing teardown", function()
  teardown(function() error("teardown broke") end)
  it("runs the tests first", function() end)
end)

describe("a describe body that errors", function()
  it("declared before the error", function() end)
  error("the body broke")
end)

describe("finally", function()
  it("runs after the body", function()
    finally(function() error("finally broke") end)
  end)
end)

describe("#tagged names", function()
  it("carries the #slow tag", function() end)
  it("and #fast", function() end)
end)

describe("", function()
  it("an empty describe name still joins", function() end)
end)

insulate("insulate", function()
  INSULATED = true
  it("sees its own global", function() assert.is_true(INSULATED) end)
end)

describe("after insulate", function()
  it("does not", function() assert.is_nil(INSULATED) end)
end)

describe("lazy_setup", function()
  local count = 0
  lazy_setup(function() count = count + 1 end)
  it("runs once", function() assert.are.equal(1, count) end)
  it("only once", function() assert.are.equal(1, count) end)
end)
