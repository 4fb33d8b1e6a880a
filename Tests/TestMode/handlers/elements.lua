-- An output handler (-o ./elements.lua) that prints the elements busted's events give: what
-- the file and describe events are published with, the suite's name, and busted.children.
return function(options)
  local busted = require("busted")
  local handler = require("busted.outputHandlers.base")()
  local function show(e)
    if type(e) ~= "table" then return tostring(e) end
    return tostring(e.descriptor) .. ":" .. tostring(e.name)
  end
  local function line(...) io.write(table.concat({ ... }, " "), "\n") end
  busted.subscribe({ "suite", "start" }, function(suite)
    line("suite start", show(suite))
    return nil, true
  end)
  for _, edge in ipairs { "start", "end" } do
    busted.subscribe({ "file", edge }, function(...)
      line("file " .. edge, select("#", ...), show((...)))
      return nil, true
    end)
    busted.subscribe({ "describe", edge }, function(...)
      line("describe " .. edge, select("#", ...), show((...)), "in", show(select(2, ...)))
      return nil, true
    end)
  end
  busted.subscribe({ "describe", "end" }, function(block)
    local children = {}
    for _, child in ipairs(busted.children(block)) do
      local trace = type(child.trace) == "table" and child.trace.currentline or "?"
      children[#children + 1] = show(child) .. "@" .. tostring(trace)
    end
    line("  children:", table.concat(children, ", "))
    return nil, true
  end)
  return handler
end
