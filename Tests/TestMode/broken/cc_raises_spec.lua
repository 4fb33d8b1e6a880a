-- A file whose top level raises after declaring a test: busted names the error "suite FILE".
describe("declared first", function() it("never runs", function() end) end)
error("the top level broke")
