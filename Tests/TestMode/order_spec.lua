-- Six tests that print their names, for --shuffle and --seed.
describe("order", function()
  for i = 1, 6 do
    it("test " .. i, function() print("ran " .. i) end)
  end
end)
