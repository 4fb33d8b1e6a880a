-- Three tests, for the order of files.
it("f5 x", function() end)
it("f5 y", function() end)
it("f5 z", function() end)
