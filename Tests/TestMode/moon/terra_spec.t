-- A Terra spec: without Terra, busted stops at it (its terra loader raises).
describe("x", function() it("y", function() end) end)
