-- Ctrl-C while the file's top level reads a command (line 4): the test below is never declared.
local marker = assert(io.open(assert(os.getenv("TOPLEVEL_MARKER")), "w"))
marker:close()
local output = io.popen("sleep 30"):read("a")
it("never declared", function() end)
