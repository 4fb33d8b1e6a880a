-- Three tests, for the order of files.
it("f1 x", function() end)
it("f1 y", function() end)
it("f1 z", function() end)
