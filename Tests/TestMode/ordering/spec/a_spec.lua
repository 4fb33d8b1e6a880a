-- Blocks, hooks and a pending test: busted shuffles all a block declared, hooks included.
describe("A", function()
  before_each(function() end)
  for i = 1, 8 do it("a" .. i, function() end) end
  setup(function() end)
  describe("inner", function()
    randomize(42)
    for i = 1, 5 do it("in" .. i, function() end) end
  end)
  pending("p1")
end)
it("top1", function() end)
it("top2", function() end)
