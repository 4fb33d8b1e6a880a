-- format.lua: how the REPL shows results; loaded the first time it shows one, not by every run.
-- Strings as they are at the top, tables nested and bounded, everything with a metatable
-- (operations, queues, progress) by its __tostring. Returns the function that formats a
-- chunk's results, tab-separated.
local function format(v, depth, seen)
  local t = type(v)
  if t == "string" then return depth == 0 and v or string.format("%q", v) end
  if t ~= "table" or getmetatable(v) ~= nil then return tostring(v) end
  if seen[v] then return "<cycle>" end
  if depth >= 3 then return "{…}" end
  seen[v] = true
  local parts, count, length = {}, 0, #v
  local function add(text)
    count = count + 1
    if count <= 20 then parts[#parts + 1] = text elseif count == 21 then parts[#parts + 1] = "…" end
  end
  -- Only what can be shown is formatted (20 items; keys sorted among the first 100 found), so
  -- a large table stays within the bound taskrun puts on formatting.
  for i = 1, math.min(length, 21) do add(format(v[i], depth + 1, seen)) end
  local keys = {}
  for k in next, v do
    if not (math.type(k) == "integer" and k >= 1 and k <= length) then
      keys[#keys + 1] = k
      if #keys >= 100 then break end
    end
  end
  table.sort(keys, function(a, b) return tostring(a) < tostring(b) end)
  for _, k in ipairs(keys) do
    local key = type(k) == "string" and k:match("^[%a_][%w_]*$") and k or "[" .. format(k, depth + 1, seen) .. "]"
    add(key .. " = " .. format(v[k], depth + 1, seen))
  end
  seen[v] = nil
  return #parts == 0 and "{}" or "{ " .. table.concat(parts, ", ") .. " }"
end
return function(...)
  local out = {}
  for i = 1, select("#", ...) do out[i] = format((select(i, ...)), 0, {}) end
  return table.concat(out, "\t")
end
