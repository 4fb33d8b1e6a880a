it("sees what the file before it left in _G", function()
  print("SHARED_GLOBAL=" .. tostring(SHARED_GLOBAL) .. " loaded=" .. tostring(package.loaded["made.by.a"]))
end)
