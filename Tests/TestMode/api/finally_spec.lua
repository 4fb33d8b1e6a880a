-- Where `finally` and `pending` are (busted/init.lua's it, busted/block.lua's rejectAll):
-- `finally` only in a test; `pending()` in a test makes it pending, in its finally or in a
-- hook it raises "'pending' not supported inside current context block"; a test or a hook
-- may not declare.
local words = { "describe", "context", "insulate", "expose", "it", "spec", "test", "setup", "teardown",
  "before_each", "after_each", "lazy_setup", "lazy_teardown", "strict_setup", "strict_teardown", "randomize" }

local function rejects(word)
  assert.has_error(_ENV[word], "'" .. word .. "' not supported inside current context block")
end

local function unsupported()
  assert.is_nil(finally)
  assert.is_nil(file)
  for _, word in ipairs(words) do rejects(word) end
  rejects("pending")
end

describe('finally and pending', function()
  local seen = {}
  setup(unsupported)
  teardown(unsupported)
  before_each(unsupported)
  after_each(unsupported)
  lazy_setup(unsupported)
  lazy_teardown(unsupported)

  it('a test has finally, and may not declare', function()
    assert.is_function(finally)
    for _, word in ipairs(words) do rejects(word) end
    finally(function() seen[#seen + 1] = "first finally" end)
    finally(function() seen[#seen + 1] = "last finally" end)
  end)

  it('only the last finally ran', function()
    assert.are.same({ "last finally" }, seen)
  end)

  it('pending in a finally raises', function()
    finally(function()
      assert.is_function(finally)
      rejects("pending")
    end)
  end)

  it('pending in a test makes it pending', function()
    pending('not yet')
  end)

  it('an error from pending in a finally fails the test', function()
    finally(function() pending('in finally') end)
  end)
end)

describe('a hook calling pending', function()
  before_each(function() pending('from before_each') end)
  it('does not run', function() error("never") end)
end)

describe('a describe has no finally', function()
  it('nor does its body', function() assert.is_nil(FINALLY_IN_DESCRIBE) end)
  FINALLY_IN_DESCRIBE = finally
end)
