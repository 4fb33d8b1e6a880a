-- busted/json.lua: `-o json`, busted's json output handler (busted/outputHandlers/json.lua) as a
-- handler on busted/base.lua: at the suite's end, one line holding busted's object
-- { successes, failures, errors, pendings, duration }, each entry base.lua's `format` of it
-- (name: the full name, message, trace, element, randomseed, isError). The encoder is taskrun's
-- own (busted's is dkjson's, which gives up on a function or a cycle and then prints nothing
-- of the run): what JSON cannot hold is left out. Loaded as "=[busted]"; kept as T.output_json.
local host, T = ...

-- The fields of busted's elements (busted/block.lua, busted/core.lua): an element's own name,
-- its descriptor, attributes, where it was declared and its times. taskrun's elements hold
-- more (its runtime's links, kind, file, line): those stay out of the JSON.
local element_fields = {
  "name", "descriptor", "attributes", "trace", "starttick", "endtick", "starttime", "endtime", "duration",
}

local function element_of(copy)
  if type(copy) ~= "table" then return copy end
  local result = {}
  for _, key in ipairs(element_fields) do result[key] = copy[key] end
  if result.attributes == nil then result.attributes = {} end
  return result
end

local escapes = { ['"'] = '\\"', ["\\"] = "\\\\", ["\b"] = "\\b", ["\f"] = "\\f", ["\n"] = "\\n", ["\r"] = "\\r", ["\t"] = "\\t" }

-- A string as JSON: control characters escaped; a byte that is not part of valid UTF-8 is
-- taken as the Latin-1 character it would be, so the output is always valid UTF-8.
local function quoted(text)
  local parts, i = {}, 1
  while i <= #text do
    local ok, position = utf8.len(text, i)
    local stop = ok and #text or position - 1
    parts[#parts + 1] = text:sub(i, stop)
    if ok then break end
    parts[#parts + 1] = utf8.char(text:byte(position))
    i = position + 1
  end
  local valid = table.concat(parts)
  return '"' .. valid:gsub('[%c"\\]', function(c)
    return escapes[c] or string.format("\\u%04x", c:byte())
  end) .. '"'
end

local function number_text(value)
  if value ~= value or value == math.huge or value == -math.huge then return "null" end
  if math.type(value) == "integer" then return string.format("%d", value) end
  local text = string.format("%.14g", value)
  if tonumber(text) ~= value then text = string.format("%.17g", value) end
  return text
end

local encode

-- A table is an array when its keys are 1..n (an empty one too, as dkjson writes it), else an
-- object with its keys sorted; functions, userdata, threads and cycles are left out.
local function table_text(value, open)
  if open[value] then return nil end
  open[value] = true
  local n, count = #value, 0
  for _ in next, value do count = count + 1 end
  local out = {}
  if count == n then
    for i = 1, n do out[i] = encode(value[i], open) or "null" end
    open[value] = nil
    return "[" .. table.concat(out, ",") .. "]"
  end
  local keys = {}
  for key in next, value do
    if type(key) == "string" or type(key) == "number" then keys[#keys + 1] = key end
  end
  table.sort(keys, function(a, b)
    if type(a) == type(b) then return a < b end
    return type(a) == "number"
  end)
  for _, key in ipairs(keys) do
    local text = encode(value[key], open)
    if text then out[#out + 1] = quoted(tostring(key)) .. ":" .. text end
  end
  open[value] = nil
  return "{" .. table.concat(out, ",") .. "}"
end

function encode(value, open)
  local kind = type(value)
  if kind == "nil" then return "null" end
  if kind == "boolean" then return tostring(value) end
  if kind == "number" then return number_text(value) end
  if kind == "string" then return quoted(value) end
  if kind == "table" then return table_text(value, open) end
  return nil
end
T.json_encode = function(value) return encode(value, {}) or "null" end

function T.output_json(options)
  local busted = require("busted")
  local handler = require("busted.outputHandlers.base")()

  local function entries(list)
    local result = {}
    for i, formatted in ipairs(list) do
      result[i] = {
        name = formatted.name, message = formatted.message, trace = formatted.trace,
        element = element_of(formatted.element), randomseed = formatted.randomseed, isError = formatted.isError,
      }
    end
    return result
  end

  function handler.suiteEnd()
    io.stdout:write(T.json_encode({
      pendings = entries(handler.pendings), successes = entries(handler.successes),
      failures = entries(handler.failures), errors = entries(handler.errors),
      duration = handler.getDuration(),
    }), "\n")
    io.stdout:flush()
    return nil, true
  end

  busted.subscribe({ "suite", "end" }, handler.suiteEnd)
  return handler
end
