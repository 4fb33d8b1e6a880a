-- busted/base.lua: what `require("busted.outputHandlers.base")` gives a handler in taskrun:
-- a function making a handler that keeps busted's lists and counts (successes, failures,
-- errors, pendings and their counts) from the run's events, with getFullName and format as
-- busted's handlers use them. Written for taskrun (busted's own module is never loaded);
-- loaded as "=[busted]" after busted/run.lua and kept as T.output_base.
local host, T = ...

-- An element's block as busted's context.parent gives it: a test's or block's own block, a
-- file's the suite.
local function parent_of(element)
  if type(element) ~= "table" then return nil end
  if element.parent ~= nil then return element.parent end
  if element.kind == "file" then return T.root end
  return nil
end
T.parent_of = parent_of

-- The name busted's getFullName reads: the suite is "suite" (its descriptor in busted).
local function label(element)
  if element == T.root then return "suite" end
  return element.name or element.descriptor
end

-- busted's full name: the element's name after those of its blocks, up to the file.
local function full_name(element)
  local names = { label(element) }
  local parent = parent_of(element)
  while parent and label(parent) and parent.descriptor ~= "file" do
    table.insert(names, 1, label(parent))
    parent = parent_of(parent)
  end
  return table.concat(names, " ")
end

-- What a copy of an element leaves out: functions, environments and the links of the
-- runtime's tree (a handler may encode the copy as JSON).
local private = {
  env = true, parent = true, children = true, world = true, hooks_context = true,
  before_each = true, after_each = true, setup = true, teardown = true, lazy_setup = true,
  lazy_teardown = true, finally = true,
}

local function copy(element)
  local result = {}
  for key, value in next, element do
    if type(value) ~= "function" and not private[key] then result[key] = value end
  end
  return result
end

function T.output_base()
  local busted = require("busted")
  local handler = {
    successes = {}, successesCount = 0, pendings = {}, pendingsCount = 0,
    failures = {}, failuresCount = 0, errors = {}, errorsCount = 0, inProgress = {},
  }

  -- With --suppress-pending, a pending test's events do not reach the handler.
  function handler.cancelOnPending(element, _, status)
    local suppress = handler.options and handler.options.suppressPending
    return not (suppress and (element.descriptor == "pending" or status == "pending"))
  end

  handler.getFullName = full_name

  function handler.format(element, parent, message, debug, isError)
    local formatted = {
      trace = debug or element.trace,
      element = copy(element),
      name = full_name(element),
      message = message,
      randomseed = parent and parent.randomseed,
      isError = isError,
    }
    formatted.element.trace = element.trace or debug
    return formatted
  end

  function handler.getDuration()
    if not (handler.startTick and handler.endTick) then return 0 end
    return handler.endTick - handler.startTick
  end

  local function clear()
    handler.successes, handler.successesCount = {}, 0
    handler.pendings, handler.pendingsCount = {}, 0
    handler.failures, handler.failuresCount = {}, 0
    handler.errors, handler.errorsCount = {}, 0
    handler.inProgress = {}
  end

  function handler.baseSuiteReset()
    clear()
    return nil, true
  end

  function handler.baseSuiteStart(suite)
    handler.startTick, handler.startTime = suite.starttick, suite.starttime
    return nil, true
  end

  function handler.baseSuiteEnd(suite)
    handler.endTick, handler.endTime = suite.endtick, suite.endtime
    return nil, true
  end

  function handler.baseTestStart(element)
    handler.inProgress[tostring(element)] = {}
    return nil, true
  end

  -- A failure or an error is listed when its event comes (before the test's end).
  function handler.baseTestEnd(element, parent, status, debug)
    local list
    if status == "success" then
      list = handler.successes
      handler.successesCount = handler.successesCount + 1
    elseif status == "pending" then
      list = handler.pendings
      handler.pendingsCount = handler.pendingsCount + 1
    elseif status == "failure" then
      handler.failuresCount = handler.failuresCount + 1
      return nil, true
    else
      return nil, true
    end
    local formatted = handler.format(element, parent, element.message, debug)
    local id = tostring(element)
    for key, value in pairs(handler.inProgress[id] or {}) do formatted[key] = value end
    handler.inProgress[id] = nil
    table.insert(list, formatted)
    return nil, true
  end

  -- pending("why") inside a test: its message and where it was.
  function handler.basePending(element, _, message, debug)
    local id = tostring(element)
    handler.inProgress[id] = handler.inProgress[id] or {}
    handler.inProgress[id].message = message
    handler.inProgress[id].trace = debug
    return nil, true
  end

  function handler.baseTestFailure(element, parent, message, debug)
    table.insert(handler.failures, handler.format(element, parent, message, debug))
    return nil, true
  end

  function handler.baseTestError(element, parent, message, debug)
    handler.errorsCount = handler.errorsCount + 1
    table.insert(handler.errors, handler.format(element, parent, message, debug, true))
    return nil, true
  end

  -- Errors outside tests (a file, a describe body, a hook).
  function handler.baseError(element, parent, message, debug)
    if element.descriptor ~= "it" then
      handler.errorsCount = handler.errorsCount + 1
      table.insert(handler.errors, handler.format(element, parent, message, debug, true))
    end
    return nil, true
  end

  function handler.subscribe(self, options)
    self.options = options
    -- busted's words (say's output.* strings), for handlers that print them, as busted's base
    -- loads them: its own language files when lua-busted is installed
    pcall(require, "busted.languages.en")
    if options and options.language and options.language ~= "en" then
      pcall(require, "busted.languages." .. options.language)
    end
    local first = { priority = 1 }
    local filtered = { priority = 1, predicate = self.cancelOnPending }
    busted.subscribe({ "suite", "reset" }, self.baseSuiteReset, first)
    busted.subscribe({ "suite", "start" }, self.baseSuiteStart, first)
    busted.subscribe({ "suite", "end" }, self.baseSuiteEnd, first)
    busted.subscribe({ "test", "start" }, self.baseTestStart, filtered)
    busted.subscribe({ "test", "end" }, self.baseTestEnd, filtered)
    busted.subscribe({ "pending" }, self.basePending, filtered)
    busted.subscribe({ "failure", "it" }, self.baseTestFailure, first)
    busted.subscribe({ "error", "it" }, self.baseTestError, first)
    busted.subscribe({ "failure" }, self.baseError, first)
    busted.subscribe({ "error" }, self.baseError, first)
  end

  return handler
end
