-- busted/gtest.lua: `-o gtest`, Google Test's layout as busted 2.1.1 prints it ([ RUN ],
-- [ OK ], the counts and the lists at the end), as a handler on busted/base.lua: what any
-- handler given by -o gets. Loaded as "=[busted]"; kept as T.output_gtest.
local host, T = ...

local plain = setmetatable({}, { __index = function() return function(s) return s end end })
local codes = { green = 32, yellow = 33, red = 31, magenta = 35, cyan = 36, bright = 1 }
local ansi = setmetatable({}, {
  __index = function(_, name)
    return function(s) return "\27[" .. codes[name] .. "m" .. tostring(s) .. "\27[0m" end
  end,
})

-- -Xoutput --color / --plain, as busted's gtest takes them; anything else is refused as its
-- command line parser refuses it.
local function flags(arguments)
  local given = {}
  for _, argument in ipairs(arguments or {}) do
    if argument == "--color" or argument == "--plain" then
      given[argument:sub(3)] = true
    elseif argument:match("^%-") then
      error("gtest output handler: unknown/bad flag: " .. argument, 0)
    else
      error("gtest output handler: bad number of arguments: 0 argument(s) must be specified, not 1", 0)
    end
  end
  return given
end

local function plural(n, one, many) return n == 1 and one or many end

function T.output_gtest(options)
  local busted = require("busted")
  local handler = require("busted.outputHandlers.base")()
  local given = flags(options.arguments)
  -- --plain wins over --color, whatever their order (busted's handler checks it first)
  local color = not given.plain and (given.color or options.color == true)
  local c = color and ansi or plain
  pcall(function() T.assert:set_parameter("TableErrorHighlightColor", color and "red" or "none") end)
  local out = io.stdout

  local function write(text)
    out:write(text)
    out:flush()
  end

  local function described(value)
    if type(value) == "string" then return value end
    if value == nil then return "Nil error" end
    local ok, pretty = pcall(require, "pl.pretty")
    return ok and pretty.write(value) or tostring(value)
  end

  local function where(element)
    local trace = element.trace
    if not (trace and trace.short_src) then return "" end
    return c.cyan(trace.short_src) .. " @ " .. c.cyan(trace.currentline) .. ": "
  end

  local function full(element) return where(element) .. c.bright(handler.getFullName(element)) end

  local function failure_text(item)
    local text = item.randomseed and ("Random seed: " .. item.randomseed .. "\n") or ""
    text = text .. described(item.message) .. "\n"
    if options.verbose and item.trace and item.trace.traceback then
      text = text .. item.trace.traceback .. "\n"
    end
    return text
  end

  local function pending_text(item)
    if item.message == nil then return "" end
    return described(item.message) .. "\n"
  end

  local files, file_tests, tests = 0, 0, 0
  local counts = { success = 0, pending = 0, failure = 0, error = 0 }
  local marks = {
    success = c.green("[       OK ]"), pending = c.yellow("[ SKIPPED  ]"),
    failure = c.red("[  FAILED  ]"), error = c.magenta("[  ERROR   ]"),
  }

  local function listed(status, items, describe)
    local n = counts[status]
    if n == 0 then return "" end
    local mark = marks[status]
    local noun = status == "error" and plural(n, "error", "errors") or plural(n, "test", "tests")
    local text = mark .. " " .. n .. " " .. noun .. ", listed below:\n"
    for _, item in ipairs(items) do
      text = text .. mark .. " " .. where(item.element) .. c.bright(item.name) .. "\n"
      if options.deferPrint then text = text .. describe(item) end
    end
    return text
  end

  local function total(status, word)
    local n = counts[status]
    if n == 0 then return "" end
    if status == "error" then return " " .. n .. " " .. plural(n, "ERROR", "ERRORS") .. "\n" end
    return " " .. n .. " " .. word .. " " .. plural(n, "TEST", "TESTS") .. "\n"
  end

  function handler.suiteReset()
    files, file_tests, tests = 0, 0, 0
    counts = { success = 0, pending = 0, failure = 0, error = 0 }
    return nil, true
  end

  function handler.suiteStart(_, round, rounds, seed)
    if (rounds or 1) > 1 then
      write(string.format("\nRepeating all tests (run %u of %u) . . .\n\n", round, rounds))
    end
    if seed then write(c.yellow(string.format("Note: Randomizing test order with a seed of %u.\n", seed))) end
    write(c.green("[==========]") .. " Running tests from scanned files.\n")
    write(c.green("[----------]") .. " Global test environment setup.\n")
    return nil, true
  end

  function handler.suiteEnd(suite)
    local ms = (suite.duration or 0) * 1000
    local text = c.green("[----------]") .. " Global test environment teardown.\n"
      .. c.green("[==========]") .. string.format(" %u %s from %u test %s ran. (%.2f ms total)\n",
        tests, plural(tests, "test", "tests"), files, plural(files, "file", "files"), ms)
      .. c.green("[  PASSED  ]") .. string.format(" %u %s.\n", counts.success, plural(counts.success, "test", "tests"))
      .. listed("pending", handler.pendings, pending_text)
      .. listed("failure", handler.failures, failure_text)
      .. listed("error", handler.errors, failure_text)
    if counts.pending + counts.failure + counts.error > 0 then text = text .. "\n" end
    text = text .. total("pending", "SKIPPED") .. total("failure", "FAILED") .. total("error", "")
    write(text)
    return nil, true
  end

  function handler.fileStart(file)
    file_tests = 0
    write(c.green("[----------]") .. " Running tests from " .. file.name .. "\n")
    return nil, true
  end

  function handler.fileEnd(file)
    files = files + 1
    write(c.green("[----------]") .. string.format(" %u %s from %s (%.2f ms total)\n\n",
      file_tests, plural(file_tests, "test", "tests"), file.name, (file.duration or 0) * 1000))
    return nil, true
  end

  function handler.testStart(element)
    write(c.green("[ RUN      ]") .. " " .. full(element) .. "\n")
    return nil, true
  end

  function handler.testEnd(element, _, status)
    file_tests, tests = file_tests + 1, tests + 1
    if counts[status] then counts[status] = counts[status] + 1 end
    local mark = marks[status] or marks.error
    write(string.format("%s %s (%.2f ms)\n", mark, full(element), (element.duration or 0) * 1000))
    return nil, true
  end

  function handler.testFailure()
    if not options.deferPrint then write(failure_text(handler.failures[#handler.failures])) end
    return nil, true
  end

  function handler.testError()
    if not options.deferPrint then write(failure_text(handler.errors[#handler.errors])) end
    return nil, true
  end

  function handler.error(element)
    if element.descriptor ~= "it" then
      if not options.deferPrint then write(failure_text(handler.errors[#handler.errors])) end
      counts.error = counts.error + 1
    end
    return nil, true
  end

  busted.subscribe({ "suite", "reset" }, handler.suiteReset)
  busted.subscribe({ "suite", "start" }, handler.suiteStart)
  busted.subscribe({ "suite", "end" }, handler.suiteEnd)
  busted.subscribe({ "file", "start" }, handler.fileStart)
  busted.subscribe({ "file", "end" }, handler.fileEnd)
  busted.subscribe({ "test", "start" }, handler.testStart, { predicate = handler.cancelOnPending })
  busted.subscribe({ "test", "end" }, handler.testEnd, { predicate = handler.cancelOnPending })
  busted.subscribe({ "failure", "it" }, handler.testFailure)
  busted.subscribe({ "error", "it" }, handler.testError)
  busted.subscribe({ "failure" }, handler.error)
  busted.subscribe({ "error" }, handler.error)
  return handler
end
