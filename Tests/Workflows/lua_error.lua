-- A Lua error in a body keeps file:line and a traceback of the user's frames.
-- exit: 1
-- stderr: FAILED    parse (
-- stderr: ): lua_error.lua:13: bad line 3
-- stderr: stack traceback:
-- stderr: lua_error.lua:13: in upvalue 'check'
-- stderr: lua_error.lua:17: in function <lua_error.lua:16>
-- not-stderr: [taskrun]
-- not-stderr: [C]: in ?
local lines = { "ok", "ok", "bad" }

local function check(i, line)
  if line == "bad" then error("bad line " .. i) end
end

operation { name = "parse", run = function()
  for i, line in ipairs(lines) do check(i, line) end
end }
