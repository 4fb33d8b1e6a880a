-- Three tests, for the order of files.
it("f2 x", function() end)
it("f2 y", function() end)
it("f2 z", function() end)
