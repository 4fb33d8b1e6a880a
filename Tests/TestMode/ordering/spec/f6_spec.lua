-- Three tests, for the order of files.
it("f6 x", function() end)
it("f6 y", function() end)
it("f6 z", function() end)
