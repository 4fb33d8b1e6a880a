-- A --helper as projects write them: luassert's state is snapshotted around every suite,
-- file, block and test (busted's events), and a suite-wide before_each counts the tests.
local busted = require "busted"
local state = require "luassert.state"
for _, phase in ipairs { "suite", "file", "describe", "test" } do
  busted.subscribe({ phase, "start" }, function() state.snapshot() return nil, true end)
  busted.subscribe({ phase, "end" }, function() state.revert() return nil, true end)
end
busted.before_each(function() BEFORE_EACH_COUNT = (BEFORE_EACH_COUNT or 0) + 1 end)
