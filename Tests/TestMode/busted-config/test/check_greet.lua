local greet = require "greet"
describe("greet", function()
  it("greets", function() assert.are.equal("hello you", greet("you")) end)
  it("is slow #slow", function() error("excluded by .busted") end)
end)
