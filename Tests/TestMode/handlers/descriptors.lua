-- A handler that prints the descriptor of each element an error is told of.
return function(options)
  local busted = require("busted")
  local handler = require("busted.outputHandlers.base")()
  busted.subscribe({ "error" }, function(element) print("ERROR " .. tostring(element.descriptor)) return nil, true end)
  return handler
end
