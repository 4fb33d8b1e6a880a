-- A file whose top level raises after declaring a test: the file's error, placed where it
-- was raised (busted's file elements have no place of their own).
it("runs at the top", function() end)
error("at the top level")
