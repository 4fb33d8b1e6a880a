-- Three tests, for the order of files.
it("f3 x", function() end)
it("f3 y", function() end)
it("f3 z", function() end)
