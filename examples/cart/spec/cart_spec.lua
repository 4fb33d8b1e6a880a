-- spec/cart_spec.lua
local cart = require "cart"            -- package.path has ./?.lua, ./src/?.lua, … as in busted

describe("a cart", function()
  local c
  before_each(function() c = cart.new() end)

  it("adds up its items", function()
    c:add("tea", 3.5); c:add("milk", 1.2)
    assert.is.near(4.7, c:total(), 1e-9)
  end)

  it("tells the warehouse #parallel", function()
    local notify = stub(c, "notify")
    c:checkout()
    assert.stub(notify).was.called_with(c, match.is_table())
  end)

  pending("applies coupons")
end)
