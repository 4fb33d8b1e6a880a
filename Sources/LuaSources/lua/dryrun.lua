-- dryrun.lua: what `-n`, `taskrun graph`, `--list` and `--list-names` leave a script: it is
-- loaded and nothing runs or writes. Run once on the globals table with `note(text, faked)`,
-- which prints "(dry run) text" as `sh` does and, when `faked`, records that the plan assumed
-- a command's result, and `null_handle(mode)`, an io.popen handle over /dev/null. Commands (os.execute, io.popen) say what they would run and act as if
-- it succeeded with no output; writes (io.open for writing, io.output to a file, os.remove,
-- os.rename) are refused with Lua's nil, message, errno; os.tmpname gives a name and makes no
-- file (removing that name succeeds, as in a run); C modules are not loaded; chunks load as
-- text only. Reading files stays allowed; standard input reads as empty, and so does a file
-- opened for reading (io.open, io.lines, io.input) that `held_back(file)` says is a terminal
-- (/dev/tty: a read would wait for a key) or the pipe that is taskrun's standard input. The
-- debug functions that could reach the originals kept here (upvalues, locals, hooks, the
-- registry) are left out. A bad argument raises what a run raises: the name the caller
-- used, at the caller's line (`argerror`).
local G, note, null_handle, held_back = ...
local type, tostring, tonumber, select, error, pcall, rawget, rawequal = type, tostring, tonumber, select, error, pcall, rawget, rawequal
local find, format, match = string.find, string.format, string.match
local pack, unpack = table.pack, table.unpack
local getinfo = G.debug and G.debug.getinfo
local getmetatable = G.debug and G.debug.getmetatable
local EROFS = 30

local function refuse(what, doing, path)
  local text = format("%s: not %s '%s'", what, doing, tostring(path))
  note(text, false)
  return nil, "(dry run) " .. text, EROFS
end

-- Argument errors read as the originals' (luaL_argerror): the name the caller called the
-- function by (`io.open` called as `o` is 'o'; `global` when it has none, as after a tail
-- call), raised at the caller's line. `depth`: the functions between the wrapper and here.
local function argerror(depth, global, n, text)
  local info = getinfo and getinfo(2 + depth, "n")
  local name = info and info.name or global
  error(format("bad argument #%d to '%s' (%s)", n, name, text), 3 + depth)
end

-- An argument error naming `global` whatever the call: a run's own os.execute and io.popen
-- (LuaProcesses.swift) name themselves so.
local function hosterror(depth, global, n, why)
  error(format("bad argument #%d to '%s' (%s)", n, global, why), 3 + depth)
end

-- A value's type as luaL_typeerror names it (its metatable's __name, if a string).
local function typename(value)
  local meta = getmetatable and getmetatable(value)
  local name = type(meta) == "table" and rawget(meta, "__name")
  return type(name) == "string" and name or type(value)
end

-- Argument `n` of `...` as luaL_checkstring (`optional`: luaL_optstring) reads it: a string,
-- or a number as a string; nil when optional and absent.
local function text(depth, global, n, optional, ...)
  local value = (select(n, ...))
  local t = type(value)
  if t == "string" or t == "number" then return tostring(value) end
  if optional and value == nil then return nil end
  argerror(depth + 1, global, n, "string expected, got " .. (select("#", ...) < n and "no value" or typename(value)))
end

-- `results` of `pack(pcall(original, ...))`, the original's results after `true`; an
-- argument error of the original is raised again as the wrapper's own (`argerror`), any
-- other error as it is. Called as a statement: a tail call would hide the wrapper's frame.
local function passed(global, results)
  if results[1] then return results end
  local message = results[2]
  local n, why = match(tostring(message), "^bad argument #(%d+) to '.-' %((.*)%)$")
  if n then argerror(1, global, tonumber(n), why) end
  error(message, 0)
end

local raw_open = G.io and G.io.open
local raw_loadfile, raw_load = G.loadfile, G.load

if G.os then
  local os = G.os
  local made = {}  -- the names os.tmpname gave (no file was made)
  if os.execute then
    function os.execute(...)
      local cmd = ...
      if cmd == nil then return true end
      local t = type(cmd)
      if t ~= "string" and t ~= "number" then hosterror(0, "os.execute", 1, "string expected, got " .. typename(cmd)) end
      note("os.execute: " .. tostring(cmd), true)
      return true, "exit", 0
    end
  end
  if os.remove then
    function os.remove(...)
      local name = text(0, "os.remove", 1, false, ...)
      if made[name] then made[name] = nil return true end  -- as a run would remove it
      return refuse("os.remove", "removing", name)
    end
  end
  if os.rename then
    function os.rename(...)
      local from = text(0, "os.rename", 1, false, ...)
      text(0, "os.rename", 2, false, ...)
      return refuse("os.rename", "renaming", from)
    end
  end
  if os.tmpname then
    local count = 0
    function os.tmpname()  -- a name, no file
      count = count + 1
      local name = format("/tmp/lua_dry_run_%d", count)
      made[name] = true
      return name
    end
  end
end

if G.io then
  local io = G.io
  local output = io.output
  -- A mode as fopen's check in liolib reads it ([rwa]+?b*, up to a NUL).
  local function valid(mode) return find(match(mode, "^[^\0]*"), "^[rwa]%+?b*$") ~= nil end
  local function writes(mode) return find(mode, "[wa+]") ~= nil end
  -- A file just opened for reading that is a terminal or taskrun's standard input: closed,
  -- and /dev/null read in its place.
  local function held(f, what, path)
    if not held_back(f) then return false end
    f:close()
    note(format("%s: '%s' is a terminal or standard input (read as empty)", what, tostring(path)), true)
    return true
  end
  function io.open(...)
    local path = text(0, "io.open", 1, false, ...)
    local mode = text(0, "io.open", 2, true, ...) or "r"
    if not valid(mode) then argerror(0, "io.open", 2, "invalid mode") end
    if writes(match(mode, "^[^\0]*")) then return refuse("io.open", "writing", path) end
    local f, message, code = raw_open(path, mode)
    if f and held(f, "io.open", path) then return raw_open("/dev/null", "r") end
    return f, message, code
  end
  local lines = io.lines
  if lines then
    function io.lines(...)
      if (...) == nil then  -- standard input, already empty
        local results = passed("io.lines", pack(pcall(lines, ...)))
        return unpack(results, 2, results.n)
      end
      local results = passed("io.lines", pack(pcall(lines, ...)))
      local f = results[5]
      if f and held(f, "io.lines", (...)) then return lines("/dev/null", select(2, ...)) end
      return unpack(results, 2, results.n)
    end
  end
  function io.output(...)
    local t = type((...))
    if t == "string" or t == "number" then
      local _, message = refuse("io.output", "writing", (...))
      error(message, 2)
    end
    local results = passed("io.output", pack(pcall(output, ...)))
    return unpack(results, 2, results.n)
  end
  -- Standard input is not the dry run's to take: a load to list names (shell completion on
  -- every Tab, `taskrun test` deciding whether `test` is a target) must neither wait for a
  -- terminal nor consume what was piped to the real run. It reads as empty.
  local empty = raw_open("/dev/null", "r")
  if empty then
    local read, input = io.read, io.input
    input(empty)
    io.stdin = empty
    function io.read(...)
      if input() == empty then note("io.read: standard input (read as empty)", true) end
      return read(...)
    end
    function io.input(...)
      local t = type((...))
      if t ~= "string" and t ~= "number" then
        local results = passed("io.input", pack(pcall(input, ...)))
        return unpack(results, 2, results.n)
      end
      local results = passed("io.input", pack(pcall(input, ...)))  -- opened as Lua does, made the default input
      local f = results[2]
      if rawequal(f, empty) or not held_back(f) then return f end
      input(empty)
      held(f, "io.input", (...))
      return empty
    end
  end
  if io.tmpfile then
    function io.tmpfile()  -- a file of its own in the temporary folder: a write all the same
      return refuse("io.tmpfile", "writing", "a temporary file")
    end
  end
  if io.popen then
    function io.popen(...)
      local t = type((...))
      if t ~= "string" and t ~= "number" then
        hosterror(0, "io.popen", 1, "string expected, got " .. (select("#", ...) < 1 and "no value" or typename((...))))
      end
      local cmd, mode = ...
      local m = mode == nil and "r" or mode
      t = type(m)
      if t ~= "string" and t ~= "number" then hosterror(0, "io.popen", 2, "string expected, got " .. typename(m)) end
      m = tostring(m)
      if m ~= "r" and m ~= "w" then hosterror(0, "io.popen", 2, "invalid mode") end
      note("io.popen: " .. tostring(cmd), true)
      return null_handle(m)  -- reads nothing, takes writes; closes with true, "exit", 0
    end
  end
end

-- Text chunks only (a binary chunk can break the VM's invariants, and so run anything).
-- The originals check their arguments (the mode first, as load does); their errors name
-- the caller's function and line, not these wrappers'.
function G.load(...)
  local n = select("#", ...)
  text(0, "load", 3, true, ...)
  local chunk, name, mode, env = ...
  -- A text string loads as in a run (its mode says whether text is allowed); anything else
  -- as text only.
  if type(chunk) ~= "string" or find(chunk, "^\27") then mode = "t" end
  local results = n == 0 and pack(pcall(raw_load)) or n >= 4 and pack(pcall(raw_load, chunk, name, mode, env))
    or pack(pcall(raw_load, chunk, name, mode))
  passed("load", results)
  return unpack(results, 2, results.n)
end
if raw_loadfile then
  function G.loadfile(...)
    local path = text(0, "loadfile", 1, true, ...)
    text(0, "loadfile", 2, true, ...)
    if select("#", ...) >= 3 then return raw_loadfile(path, "t", (select(3, ...))) end
    return raw_loadfile(path, "t")
  end
  function G.dofile(...)
    local f, message = raw_loadfile(text(0, "dofile", 1, true, ...), "t")
    if not f then error(message, 0) end  -- as dofile raises it: no position added
    return f()
  end
end

if G.package then
  local package = G.package
  local searchpath = package.searchpath
  package.loadlib = function(path) return nil, format("(dry run) C library '%s' not loaded", tostring(path)), "open" end
  local searchers = package.searchers
  if searchers then
    -- Lua modules as text; C modules not at all (loading one runs its code).
    searchers[2] = function(name)
      local path, message = searchpath(name, package.path)
      if not path then return message end
      local f, err = raw_loadfile(path, "t")
      if not f then error(format("error loading module '%s' from file '%s':\n\t%s", name, path, err), 0) end
      return f, path
    end
    -- A C module that is not there is reported as a run reports it (the files looked for);
    -- one that is there is not loaded. The all-in-one searcher looks for the name's root.
    local function c_module(name, file)
      local path, message = searchpath(file, package.cpath)
      if not path then return message end
      return "(dry run) C module '" .. name .. "' not loaded (" .. path .. ")"
    end
    searchers[3] = function(name) return c_module(name, name) end
    if searchers[4] then
      searchers[4] = function(name)
        local root = match(name, "^([^.]*)%.")
        if root then return c_module(name, root) end
      end
    end
    for i = 5, #searchers do searchers[i] = function() return nil end end
  end
end

if G.debug then
  local debug = G.debug
  G.debug = { traceback = debug.traceback, getinfo = debug.getinfo, gethook = debug.gethook,
              getmetatable = debug.getmetatable, getuservalue = debug.getuservalue }
  if G.package and G.package.loaded then G.package.loaded.debug = G.debug end
end
