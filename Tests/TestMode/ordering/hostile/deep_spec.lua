-- describe blocks nested DEPTH deep around one test.
local function nest(n)
  if n == 0 then it("leaf", function() end) else describe("d" .. n, function() nest(n - 1) end) end
end
nest(tonumber(os.getenv("DEPTH")))
