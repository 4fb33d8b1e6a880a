-- Prints `arg` as lua.c and busted set it.
it("shows arg", function()
  print("arg[-1]=" .. tostring(arg[-1]))
  print("arg[0]=" .. tostring(arg[0]))
  for i = 1, #arg do print("arg[" .. i .. "]=" .. arg[i]) end
  local ok, _, code = os.execute(arg[-1] .. " -e 'os.exit(7)'")
  print("interpreter exit=" .. tostring(code))
end)
