it("runs under LuaCov", function() print("LUACOV_STARTED=" .. tostring(LUACOV_STARTED)) end)
