-- busted-json.lua: a busted output handler (`busted -o scripts/busted-json.lua`) that writes
-- the object of busted's json output with only names, statuses, messages and places: busted's
-- own json output prints nothing when a suite has a pending block or a describe that errors
-- (its encoder meets functions in the elements), which scripts/compat must still compare.
local json = require "dkjson"

return function(options)
  local busted = require "busted"
  local handler = require "busted.outputHandlers.base"()

  local function place(trace)
    trace = type(trace) == "table" and trace or {}
    return { short_src = trace.short_src, currentline = trace.currentline }
  end

  local function slim(list)
    local out = {}
    for i, entry in ipairs(list) do
      local element = entry.element or {}
      local message = entry.message
      if message ~= nil and type(message) ~= "string" then message = tostring(message) end
      out[i] = {
        name = entry.name, message = message, trace = place(entry.trace or element.trace),
        element = { name = element.name, descriptor = element.descriptor, trace = place(element.trace) },
      }
    end
    return out
  end

  handler.suiteEnd = function()
    io.write(json.encode({
      pendings = slim(handler.pendings), successes = slim(handler.successes),
      failures = slim(handler.failures), errors = slim(handler.errors),
      duration = handler.getDuration(),
    }), "\n")
    io.flush()
    return nil, true
  end
  busted.subscribe({ "suite", "end" }, handler.suiteEnd)
  return handler
end
