-- benchmarks/cascades.lua: what a failure, skip, stop or Ctrl-C costs spreading through a graph.
--   taskrun -q benchmarks/cascades.lua -- CASE N
-- CASE: chain-ok (N operations in a chain, all succeed: the baseline) | chain-fail (the first
-- fails: N skips) | chain-when (the first succeeds, the rest have when = "failed": N skips) |
-- chain-stop (another operation fails while the first runs: a fail-fast stop cancels the
-- second, the rest are skipped) | chain-interrupt (the first sends taskrun SIGINT: N
-- cancellations, exit 130) | nested-ok, nested-fail, nested-skip, nested-interrupt (one
-- operation inside N nested groups: succeeds, fails, is skipped with its groups after a
-- failure, is interrupted).
local case, n = arg[1] or "chain-fail", tonumber(arg[2] or 1000)
local shape, how = case:match("^(%a+)-(%a+)$")
-- The first operation: what sets the cascade off.
local first = ({
  ok = { sh = "true" }, fail = { sh = "false" }, when = { sh = "true" }, skip = { sh = "true" },
  stop = { sh = "sleep 1" }, interrupt = { sh = "kill -INT $PPID; exec sleep 60" },
})[how] or error("unknown case '" .. case .. "'")
first.name = "n0"
if shape == "chain" then
  local p = operation(first)
  for i = 1, n do
    p = operation { name = "n" .. i, after = { p }, when = how == "when" and "failed" or nil }
  end
  if how == "stop" then operation { name = "bad", sh = "false" } end
elseif shape == "nested" then
  local g = operation(first)
  for i = 1, n do g = group { name = "g" .. i, g } end
  if how == "skip" then g:after(operation { name = "bad", sh = "false" }) end
else
  error("unknown case '" .. case .. "'")
end
