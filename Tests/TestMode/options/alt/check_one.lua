it("is found by the alt task's pattern", function() end)
