-- A custom output handler given by path (-o ./handler.lua): built on busted's base handler,
-- it prints its options, each test's full name and status, failure messages and the counts.
return function(options)
  local busted = require("busted")
  local handler = require("busted.outputHandlers.base")()

  io.write("arguments: ", table.concat(options.arguments, "|"), "\n")
  io.write("base from: ", debug.getinfo(require("busted.outputHandlers.base"), "S").short_src, "\n")
  io.write("defaultOutput: ", tostring(options.defaultOutput), " verbose: ", tostring(options.verbose),
    " language: ", tostring(options.language), "\n")

  handler.testEnd = function(element, parent, status)
    io.write(status, ": ", handler.getFullName(element), "\n")
    return nil, true
  end

  handler.failed = function(element, parent, message)
    io.write("  ", element.descriptor, " ", handler.getFullName(element), ": ", tostring(message):match("^[^\n]*"), "\n")
    return nil, true
  end

  handler.suiteEnd = function()
    io.write(string.format("counts: %d successes, %d failures, %d errors, %d pending\n",
      handler.successesCount, handler.failuresCount, handler.errorsCount, handler.pendingsCount))
    for _, list in ipairs { "successes", "failures", "errors", "pendings" } do
      local names = {}
      for _, item in ipairs(handler[list]) do names[#names + 1] = item.name end
      io.write(list, ": ", table.concat(names, ", "), "\n")
    end
    return nil, true
  end

  busted.subscribe({ "test", "end" }, handler.testEnd, { predicate = handler.cancelOnPending })
  busted.subscribe({ "failure" }, handler.failed)
  busted.subscribe({ "error" }, handler.failed)
  busted.subscribe({ "suite", "end" }, handler.suiteEnd)
  return handler
end
