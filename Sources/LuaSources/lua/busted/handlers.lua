-- busted/handlers.lua: busted's output handlers (busted/modules/output_handler_loader.lua)
-- in taskrun. A -o name taskrun does not report itself (in Swift) is loaded as busted
-- loads it: a path ending in .lua with dofile, else busted.outputHandlers.NAME, else the
-- module NAME; it is called with busted's options table, then :subscribe(options). One
-- that cannot load is an {"error", "output"} event and the default report takes over.
-- Also: the elements' times busted's handlers read, the failure/error/pending events, and
-- -o sound / --enable-sound. Loaded as "=[busted]" after busted/base.lua, gtest.lua and json.lua.
local host, T = ...

-- busted.languages.en: what -o sound says (busted's own phrases are say's strings).
local english = {
  success_messages = { "All tests passed", "Every test passed", "The specs pass" },
  failure_messages = { "Some tests failed", "A test failed", "The specs fail" },
}

-- -o sound and --enable-sound (busted/outputHandlers/sound.lua): at the suite's end, espeak
-- says whether a test failed; without espeak, taskrun says so once, on standard error.
-- `word` names what asked for it in the message: "-o sound", or "sound" (-s).
local function sound(options, word)
  local busted = require("busted")
  local handler = require("busted.outputHandlers.base")()
  local ok, language = pcall(require, "busted.languages." .. (options.language or "en"))
  if not ok or type(language) ~= "table" or not language.success_messages then language = english end
  local speaker = os.getenv("PATH") and io.popen("command -v espeak 2>/dev/null")
  local found = speaker and speaker:read("l")
  if speaker then speaker:close() end
  if not found or found == "" then
    io.stderr:write("taskrun: " .. (word or "-o sound") .. ": espeak is not installed, so nothing is said "
      .. "(Debian: apt-get install espeak)\n")
  end
  function handler.suiteEnd()
    if not found or found == "" then return nil, true end
    local messages = handler.failuresCount > 0 and language.failure_messages or language.success_messages
    local message = messages[math.random(1, #messages)]:gsub('["\\$`]', "")
    -- os.execute waits as sh does (Ctrl-C ends it): nothing is left speaking after taskrun
    os.execute("espeak -s 160 \"" .. message .. "\" > /dev/null 2>&1")
    return nil, true
  end
  busted.subscribe({ "suite", "end" }, handler.suiteEnd)
  return handler
end

-- The modules taskrun gives in place of busted's own: found first (package.preload), so the
-- system's busted/*.lua are never loaded by accident.
package.preload["busted.outputHandlers.base"] = function() return T.output_base end
package.preload["busted.outputHandlers.gtest"] = function() return T.output_gtest end
package.preload["busted.outputHandlers.json"] = function() return T.output_json end
package.preload["busted.outputHandlers.sound"] = function() return sound end
-- busted.languages.* are not given: busted's own (lua-busted), when installed, set say's
-- strings that its terminal handlers print (-o busted.outputHandlers.plainTerminal).

---------------------------------------------------------------------------------------------
-- Times, as busted's safe_publish sets them on an element when its start and end are
-- published (a handler prints a test's, a file's, the suite's duration).

local clock = host.clock
local publish = T.publish
local open = setmetatable({}, { __mode = "k" })  -- tests started and not yet ended
local stopped = setmetatable({}, { __mode = "k" })  -- tests --timeout stopped: their cleanup says so
function T.publish(path, element, ...)
  if type(path) == "table" and type(element) == "table" then
    if path[1] == "test" and path[2] == "end" and stopped[element] then return end
    if path[1] == "test" then open[element] = path[2] == "start" or nil end
    -- busted's file elements have no trace: what failed in a file's body is placed where it
    -- was raised (the error's debug table), not at a line 0
    if path[1] == "file" and path[2] == "start" and element.kind == "file" then element.trace = nil end
    if path[1] == "file" and element.load_error then return end
    if path[2] == "start" then
      element.starttick, element.starttime = clock(), os.time()
    elseif path[2] == "end" then
      element.endtick, element.endtime = clock(), os.time()
      element.duration = element.starttick and element.endtick - element.starttick
    end
  end
  return publish(path, element, ...)
end

-- busted's debug table (busted.getTrace) from the runtime's traceback: where it happened
-- (the first frame that is not C), and the traceback from there to the next C frame,
-- "\nstack traceback:\n\tFILE:LINE: in ...\n".
local function debug_info(element, message, traceback, raw)
  local trace = element.trace or {}
  local info = { short_src = trace.short_src, currentline = trace.currentline, message = tostring(message) }
  if raw then info.message = raw[1] end  -- what was raised, as busted's getTrace keeps it
  if not traceback then return info end
  local lines = {}
  for line in traceback:gmatch("[^\n]+") do
    if line:match("^%s*%[C%]") then
      if #lines > 0 then break end
    elseif not line:match("^stack traceback:") then
      lines[#lines + 1] = line
    end
  end
  local file, number = (lines[1] or ""):match("^%s*(.-):(%d+):")
  if file then info.short_src, info.currentline = file, tonumber(number) end
  info.traceback = "\nstack traceback:\n" .. table.concat(lines, "\n") .. (#lines > 0 and "\n" or "")
  return info
end

-- A spec file that does not load is an error when busted loads the files, before the suite
-- starts, and the file has no start or end (busted/modules/files/lua.lua).
local plan = T.plan
function T.plan(files, rounds)
  for _, file in ipairs(files) do
    if file.load_error then
      T.publish({ "error", "file" }, { descriptor = "file", name = file.name }, nil, file.load_error, {})
    end
  end
  return plan(files, rounds)
end

-- A failure, an error or pending() as busted's safe() publishes it: {status, descriptor}
-- with the element, its block, the message and where it happened.
function T.publish_outcome(status, element, parent, message, traceback, raw)
  if status == "success" then return end
  -- a test past --timeout is stopped at the runtime's next check, maybe in the middle of a
  -- handler: its error and end are told by its operation's cleanup instead (test_stopped)
  if status == "error" and element.kind == "test" and T.options.timeout and T.test_stopped
    and tostring(message):match("timed out after [%d.]+ s$") then
    stopped[element] = message
    return
  end
  T.publish({ status, element.descriptor }, element, parent, message, debug_info(element, message, traceback, raw))
end

-- A test that --timeout or Ctrl-C stopped while it ran (a loop) never reached its end: its
-- operation's cleanup tells the handler, as the error it counts as.
local function test_stopped(test, why, message)
  if not open[test] then return end
  local text = stopped[test] or test.file .. ":" .. test.line .. ": " .. (why == "timeout" and tostring(message) or why)
  stopped[test] = nil
  T.publish({ "error", test.descriptor }, test, test.parent, text, debug_info(test, text, nil))
  T.publish({ "test", "end" }, test, test.parent, "error")
end

-- An error of a hook: the hook as busted's element for it: setup and teardown are busted's
-- aliases of strict_setup and strict_teardown, named by the alias; the others have no name.
-- Under --lazy they are lazy_setup and lazy_teardown (`list`: where the hook was kept).
local aliases = { setup = "strict_setup", teardown = "strict_teardown" }
function T.publish_hook_error(block, hook, message, traceback, raw, list)
  local descriptor = aliases[hook.word] or hook.word
  if list == "lazy_setup" or list == "lazy_teardown" then descriptor = list end
  local element = {
    descriptor = descriptor, name = descriptor ~= hook.word and hook.word or nil, parent = block,
    attributes = { envmode = "unwrap" },  -- busted's hooks' attributes
    trace = { short_src = hook.where.file, currentline = hook.where.line },
  }
  T.publish_outcome("error", element, block, message, traceback, raw)
end

---------------------------------------------------------------------------------------------
-- Loading the handler

local function copy(list)
  local result = {}
  for i, value in ipairs(list or {}) do result[i] = value end
  return result
end

-- busted's options table for the handler (busted/runner.lua).
local function handler_options(given)
  local arguments = copy(given.output_arguments)
  local i = 0
  while _G.arg and _G.arg[i] do  -- busted copies arg[0], arg[-1] in (utils.copy_interpreter_args)
    arguments[i] = _G.arg[i]
    i = i - 1
  end
  return {
    defaultOutput = given.default_output or "plainTerminal", enableSound = given.enable_sound == true,
    verbose = given.verbose == true, suppressPending = given.suppress_pending == true,
    language = given.language or "en", deferPrint = given.defer_print == true,
    arguments = arguments, color = given.color == true,
  }
end

local function load_module(name)
  local handler
  local ok, err = pcall(function()
    if name:match("%.lua$") then
      handler = dofile((name:gsub("/%./", "/"):gsub("^%./", "")))
    else
      handler = require("busted.outputHandlers." .. name)
    end
  end)
  if not ok and tostring(err):match("module '.-' not found:") then
    ok, err = pcall(function() handler = require(name) end)
  end
  if ok and type(handler) ~= "function" and not (debug.getmetatable(handler) or {}).__call then
    ok, err = false, name .. ": an output handler must be a function (it returned " .. type(handler) .. ")"
  end
  -- where this runtime called require means nothing to the user
  return ok, ok and handler or (tostring(err):gsub("^%[busted%]:%d+: ", ""))
end

-- Called by busted/files.lua's prepare, after -e and before the helper (busted's order).
-- given.output is the -o name when a Lua handler reports, nil when taskrun's own does.
-- Returns false when the handler did not load (the default report takes over).
function T.load_output(given)
  if not given.output and not given.enable_sound then return true end
  T.test_stopped = test_stopped
  local busted = require("busted")
  if busted.parent == nil then rawset(busted, "parent", T.parent_of) end  -- busted.context.parent
  local options = handler_options(given)
  local loaded = true
  if given.output then
    busted.subscribe({ "error", "output" }, function(element, _, message)
      io.stderr:write("taskrun: error: Cannot load output library: " .. tostring(element.name) .. "\n"
        .. tostring(message) .. "\n")
      return nil, true
    end)
    local ok, handler = load_module(given.output)
    if ok then
      local made
      ok, made = pcall(handler, options)
      if not ok then error(made, 0) end  -- the handler refused its options: nothing runs
      local subscribe = (type(made) == "table" or (debug.getmetatable(made) or {}).__index) and made.subscribe
      if not subscribe then
        error(given.output .. ": an output handler's function must return a handler (base's, with subscribe); "
          .. "it returned " .. (type(made) == "table" and "a table without subscribe" or "a " .. type(made)), 0)
      end
      made:subscribe(options)
    else
      T.publish({ "error", "output" }, { descriptor = "output", name = given.output }, nil, handler, {})
      host.output_failed(given.output, tostring(handler))
      loaded = false
    end
  end
  if given.enable_sound then
    local made = sound(options, "sound")
    made:subscribe(options)
  end
  return loaded
end
