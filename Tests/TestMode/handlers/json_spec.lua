-- -o json against busted's own (which can encode this spec: no pending test, no describe error).
describe("json", function()
  it("passes", function()
    print("printed by the test")
  end)

  describe("nested", function()
    it("fails", function()
      assert.are.equal(1, 2)
    end)
  end)
end)
