-- busted drops a declaration without a function (it returns the function that would
-- declare it): `it('x')` and `describe('x')` declare nothing; `pending('x')` does.
local returned = {}

describe('declarations without a function', function()
  returned.it = it('dropped test')
  returned.spec = spec('dropped spec')
  returned.test = test('dropped test alias')
  returned.describe = describe('dropped describe')
  returned.context = context('dropped context')
  returned.before_each = before_each('dropped hook')
  returned.setup = setup()
  pending('pending without a function')
  pending('pending with a function', function() error("never runs") end)

  it('they returned functions and declared nothing', function()
    for word, value in pairs(returned) do
      assert.is_function(value, word)
    end
    assert.are.equal(7, (function() local n = 0 for _ in pairs(returned) do n = n + 1 end return n end)())
  end)
end)

describe('the function returned', function()
  local declare = it('declared late')
  declare(function() end)
end)
