-- Ctrl-C while the file's top level sleeps (line 4): the test below is never declared.
local marker = assert(io.open(assert(os.getenv("TOPLEVEL_MARKER")), "w"))
marker:close()
sleep(30)
it("never declared", function() end)
