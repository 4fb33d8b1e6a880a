-- Each way a test ends, and the message busted gives it.
describe("statuses", function()
  it("fails on an assertion", function() assert.are.same({ a = { 1, 2 } }, { a = { 1, 3 } }) end)
  it("errors on error()", function() error("plain error") end)
  it("errors on a table error", function() error({ code = 1 }) end)
  it("errors on nil", function() error() end)
  it("is truthy or not", function() assert.is_truthy(nil) end)
  it("pending inside a test", function() pending("later") end)
end)

