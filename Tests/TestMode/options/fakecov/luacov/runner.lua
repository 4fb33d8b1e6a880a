-- A stand-in for LuaCov's runner: records that --coverage started it, and with what.
return setmetatable({ configuration = { exclude = {} } }, {
  __call = function(_, config) _G.LUACOV_STARTED = config or "defaults" end,
})
