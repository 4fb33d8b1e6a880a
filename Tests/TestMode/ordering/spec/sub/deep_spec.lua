-- In a subfolder, for --no-recursive.
it("deep", function() end)
