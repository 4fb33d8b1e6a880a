-- The busted API itself, as busted 2.1.1 runs it (this file passes under busted too): hooks
-- run in busted's order, insulation holds, luassert is the real one.
local log = {}

describe("hooks", function()
  setup(function() log[#log + 1] = "setup" end)
  teardown(function() log[#log + 1] = "teardown" end)
  before_each(function() log[#log + 1] = "before" end)
  after_each(function() log[#log + 1] = "after" end)

  it("first", function()
    finally(function() log[#log + 1] = "finally" end)
    log[#log + 1] = "first"
  end)
  it("second", function() log[#log + 1] = "second" end)
end)

describe("after the hooks block", function()
  it("saw them in order", function()
    assert.are.same({ "setup", "before", "first", "finally", "after", "before", "second", "after", "teardown" }, log)
  end)
end)

describe("spies", function()
  local target = { greet = function(name) return "hello " .. name end }

  it("record calls and answers", function()
    local s = spy.on(target, "greet")
    assert.are.equal("hello you", target.greet("you"))
    assert.spy(s).was.called(1)
    assert.spy(s).was.called_with("you")
    assert.spy(s).was.returned_with("hello you")
  end)

  it("outlive the test that made them, as in busted, until reverted", function()
    assert.is_true(spy.is_spy(target.greet))
    target.greet:revert()
    assert.is_false(spy.is_spy(target.greet))
  end)

  it("stubs answer what they are told", function()
    stub(target, "greet").returns("stubbed")
    assert.are.equal("stubbed", target.greet("x"))
    assert.stub(target.greet).was.called_with(match.is_string())
  end)
end)

describe("assertion failures", function()
  it("carry expected, actual and the line of the assertion", function()
    local ok, err = pcall(assert.are.equal, 1, 2)
    assert.is_false(ok)
    local message = tostring(err)
    assert.matches("^Expected objects to be equal", message)
    assert.matches("Passed in:\n%(number%) 2\nExpected:\n%(number%) 1", message)
  end)

  it("use the caller's own message when given", function()
    local ok, err = pcall(assert.is_true, false, "the flag should be set")
    assert.is_false(ok)
    assert.matches("^the flag should be set\nExpected objects to be the same", tostring(err))
  end)

  it("negate with not", function()
    assert.is_not.equal(1, 2)
    assert.has_no.errors(function() end)
    assert.error(function() assert.is_not.equal(1, 1) end)
  end)
end)

insulate("an insulated block", function()
  LEAKED = "inside"
  it("sees its own globals", function() assert.are.equal("inside", LEAKED) end)
end)

describe("after an insulated block", function()
  it("its globals are gone", function() assert.is_nil(LEAKED) end)
end)

describe("a describe's function", function()
  local value
  before_each(function() value = "set by before_each" end)
  it("runs after the tests declared before it", function() assert.are.equal("set by before_each", value) end)
  describe("declared after a test", function()
    local seen = value  -- busted runs this function after the test above, whose hook ran
    it("sees what that test's hooks did", function() assert.are.equal("set by before_each", seen) end)
  end)
end)

describe("custom assertions", function()
  local luassert, messages = require "luassert", require "say"
  messages:set("assertion.has_key.positive", "Expected %s\nto have key %s")
  messages:set("assertion.has_key.negative", "Expected %s\nnot to have key %s")
  luassert:register("assertion", "has_key", function(_, arguments)
    return type(arguments[1]) == "table" and arguments[1][arguments[2]] ~= nil
  end, "assertion.has_key.positive", "assertion.has_key.negative")

  it("pass and negate like the built-in ones", function()
    assert.has_key({ a = 1 }, "a")
    assert.not_has_key({ a = 1 }, "b")
    assert.is_not.has_key({ a = 1 }, "c")
  end)

  it("fail with their say message and the values", function()
    local ok, err = pcall(assert.has_key, { a = 1 }, "zz")
    assert.is_false(ok)
    assert.matches("to have key %(string%) 'zz'$", tostring(err))
  end)
end)

describe("mocks", function()
  it("spy on every function of a table, nested ones too, and revert", function()
    local api = { get = function() return "real" end, nested = { put = function() end } }
    local original = api.get
    local m = mock(api)
    assert.are.equal("real", api.get("x"))
    api.nested.put(1, 2)
    assert.spy(m.get).was.called_with("x")
    assert.spy(api.nested.put).was.called(1)
    mock.revert(m)
    assert.are.equal(original, api.get)
  end)

  it("stub every function when asked", function()
    local api = { get = function() return "real" end }
    mock(api, true)
    assert.is_nil(api.get())
  end)
end)
