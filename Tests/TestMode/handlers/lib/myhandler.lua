-- A custom output handler found as a module (-o myhandler, with -m ./lib/?.lua).
return function(options)
  local busted = require("busted")
  local handler = require("busted.outputHandlers.base")()
  handler.suiteEnd = function()
    print(("myhandler %s: %d passed, %d failed, %d errors, %d pending"):format(
      table.concat(options.arguments, ","), handler.successesCount, handler.failuresCount,
      handler.errorsCount, handler.pendingsCount))
    return nil, true
  end
  busted.subscribe({ "suite", "end" }, handler.suiteEnd)
  return handler
end
