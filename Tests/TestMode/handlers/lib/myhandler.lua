-- A custom output handler found as a module (-o myhandler, with -m ./lib/?.lua): the counts,
-- and the blocks of the tests as busted.parent gives them.
return function(options)
  local busted = require("busted")
  local handler = require("busted.outputHandlers.base")()
  local blocks, seen = {}, {}
  handler.testEnd = function(element)
    local block = busted.parent(element)
    if not seen[block] then
      seen[block] = true
      blocks[#blocks + 1] = block.name
    end
    return nil, true
  end
  handler.suiteEnd = function()
    print(("myhandler %s: %d passed, %d failed, %d errors, %d pending; blocks: %s"):format(
      table.concat(options.arguments, ","), handler.successesCount, handler.failuresCount,
      handler.errorsCount, handler.pendingsCount, table.concat(blocks, ", ")))
    return nil, true
  end
  busted.subscribe({ "test", "end" }, handler.testEnd)
  busted.subscribe({ "suite", "end" }, handler.suiteEnd)
  return handler
end
