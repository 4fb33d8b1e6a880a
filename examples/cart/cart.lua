-- The shopping cart of the README's test-mode example (its specs: spec/cart_spec.lua).
local cart = {}
cart.__index = cart
function cart.new() return setmetatable({ items = {} }, cart) end
function cart:add(name, price) self.items[#self.items + 1] = { name = name, price = price } end
function cart:total()
  local sum = 0
  for _, item in ipairs(self.items) do sum = sum + item.price end
  return sum
end
function cart:notify(order) end
function cart:checkout() self:notify({ items = self.items }) end
return cart
