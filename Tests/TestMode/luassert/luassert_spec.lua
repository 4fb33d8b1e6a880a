-- What the real luassert does, which the hand-written copy got wrong (issue 14). Every test
-- passes under busted 2.1.1 too: `busted luassert_spec.lua`.
describe("luassert", function()
  it("matchers match nil arguments", function()
    local s = spy.new(function() end)
    s(nil, 2)
    assert.spy(s).was.called_with(match.is_nil(), match._)
    assert.spy(s).was.called_with(match._, match.is_number())
  end)

  it("same compares contents, not __eq", function()
    local eq = { __eq = function() return true end }
    local a, b = setmetatable({ 1 }, eq), setmetatable({ 2 }, eq)
    assert.are_not.same(a, b)
    assert.are.same({ x = { 1, 2 } }, { x = { 1, 2 } })
  end)

  it("stub(obj, key, fn) calls fn", function()
    local t = { f = function() return "real" end }
    stub(t, "f", function(x) return "fake " .. x end)
    assert.are.equal("fake y", t.f("y"))
    assert.stub(t.f).was.called_with("y")
    t.f:revert()
  end)

  it("called.at_least and at_most chain", function()
    local s = spy.new(function() end)
    s() s()
    assert.spy(s).was.called.at_least(2)
    assert.spy(s).was.called.at_most(2)
    assert.spy(s).was_not.called.at_least(3)
  end)

  it("by_default.returns answers any call", function()
    local s = stub.new().by_default.returns("default")
    s.on_call_with(1).returns("one")
    assert.are.equal("default", s(5))
    assert.are.equal("one", s(1))
  end)

  it("assert.message puts a message in front of the failure", function()
    local ok, err = pcall(function() assert.message("custom").is_true(false) end)
    assert.is_false(ok)
    assert.matches("custom\nExpected objects to be the same", tostring(err))
  end)

  it("array().has.no.holes", function()
    assert.array({ 1, 2, 3 }).has.no.holes()
    assert.has_error(function() assert.array({ 1, nil, 3 }).has.no.holes() end)
  end)

  it("a matcher may return a callable object, and has_error takes one", function()
    local luassert = require "luassert"
    luassert:register("matcher", "even", function()
      return setmetatable({}, { __call = function(_, value) return value % 2 == 0 end })
    end)
    local s = spy.new(function() end)
    s(4)
    assert.spy(s).was.called_with(match.is_even())
    assert.has_error(setmetatable({}, { __call = function() error("called") end }))
  end)

  it("returned_arguments counts what a call returned", function()
    local function three() return 1, 2, 3 end
    assert.returned_arguments(3, three())
  end)

  it("has_match takes a failure message", function()
    assert.has_match("^a", "abc", "a message")
    local ok, err = pcall(function() assert.has_match("^z", "abc", "the message") end)
    assert.is_false(ok)
    assert.matches("the message\nExpected strings to match", tostring(err))
  end)

  it("near accepts numeric strings", function()
    assert.is.near("1.0", 1.05, 0.1)
  end)

  it("has_error and error_matches return the error", function()
    local err = assert.has_error(function() error({ code = 7 }) end)
    assert.are.equal(7, err.code)
    local number = assert.error_matches(function() error("boom 42", 0) end, "boom (%d+)")
    assert.are.equal("42", number)
  end)
end)
