-- Curried declarations, every word busted registers (busted/core.lua's register): `word
-- 'name' (fn)`. Compared with busted itself (BustedCompatTests).
local log = {}

describe 'curried describe' (function()
  setup 'a named setup' (function() log[#log + 1] = "setup" end)
  strict_setup 'a strict setup' (function() log[#log + 1] = "strict_setup" end)
  lazy_setup 'a lazy setup' (function() log[#log + 1] = "lazy_setup" end)
  before_each 'a named before_each' (function() log[#log + 1] = "before_each" end)
  after_each 'a named after_each' (function() log[#log + 1] = "after_each" end)
  lazy_teardown 'a lazy teardown' (function() log[#log + 1] = "lazy_teardown" end)
  strict_teardown 'a strict teardown' (function() log[#log + 1] = "strict_teardown" end)
  teardown 'a named teardown' (function() log[#log + 1] = "teardown" end)

  it 'it' (function() log[#log + 1] = "it" end)
  spec 'spec' (function() log[#log + 1] = "spec" end)
  test 'test' (function() log[#log + 1] = "test" end)
  context 'context' (function()
    it 'in a context' (function() log[#log + 1] = "context" end)
  end)
  insulate 'insulate' (function()
    it 'in an insulate' (function() log[#log + 1] = "insulate" end)
  end)
  expose 'expose' (function()
    it 'in an expose' (function() log[#log + 1] = "expose" end)
  end)
  it 'fails as any test does' (function() assert.are.equal(1, 2) end)
end)

describe('after the curried describe', function()
  it('every hook and test ran, in busted\'s order', function()
    assert.are.same({
      "setup", "strict_setup",
      "lazy_setup", "before_each", "it", "after_each",
      "before_each", "spec", "after_each",
      "before_each", "test", "after_each",
      "before_each", "context", "after_each",
      "before_each", "insulate", "after_each",
      "before_each", "expose", "after_each",
      "before_each", "after_each",
      "lazy_teardown", "strict_teardown", "teardown",
    }, log)
  end)
end)

describe 'a curried hook that fails' (function()
  before_each 'named before_each' (function() error("broke") end)
  it 'does not count' (function() end)
end)
