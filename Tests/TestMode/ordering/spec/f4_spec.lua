-- Three tests, for the order of files.
it("f4 x", function() end)
it("f4 y", function() end)
it("f4 z", function() end)
