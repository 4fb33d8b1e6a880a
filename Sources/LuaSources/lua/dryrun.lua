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
-- registry) are left out.
local G, note, null_handle, held_back = ...
local type, tostring, select, error = type, tostring, select, error
local find, format = string.find, string.format
local EROFS = 30

local function refuse(what, doing, path)
  local text = format("%s: not %s '%s'", what, doing, tostring(path))
  note(text, false)
  return nil, "(dry run) " .. text, EROFS
end

local function command(value, what, n)
  local t = type(value)
  if t ~= "string" and t ~= "number" then
    error(format("bad argument #%d to '%s' (string expected, got %s)", n, what, t), 3)
  end
  return tostring(value)
end

local raw_open = G.io and G.io.open
local raw_loadfile, raw_load = G.loadfile, G.load

if G.os then
  local os = G.os
  local made = {}  -- the names os.tmpname gave (no file was made)
  if os.execute then
    function os.execute(cmd)
      if cmd == nil then return true end
      note("os.execute: " .. command(cmd, "os.execute", 1), true)
      return true, "exit", 0
    end
  end
  if os.remove then
    function os.remove(path)
      local name = command(path, "os.remove", 1)
      if made[name] then made[name] = nil return true end  -- as a run would remove it
      return refuse("os.remove", "removing", name)
    end
  end
  if os.rename then
    function os.rename(from, to)
      command(to, "os.rename", 2)
      return refuse("os.rename", "renaming", command(from, "os.rename", 1))
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
  local function writes(mode) return find(mode, "[wa+]") ~= nil end
  -- A file just opened for reading that is a terminal or taskrun's standard input: closed,
  -- and /dev/null read in its place.
  local function held(f, what, path)
    if not held_back(f) then return false end
    f:close()
    note(format("%s: '%s' is a terminal or standard input (read as empty)", what, tostring(path)), true)
    return true
  end
  function io.open(path, mode, ...)
    local m = mode == nil and "r" or mode
    if type(m) == "string" and writes(m) then return refuse("io.open", "writing", command(path, "io.open", 1)) end
    local f, message, code = raw_open(path, mode, ...)
    if f and held(f, "io.open", path) then return raw_open("/dev/null", "r") end
    return f, message, code
  end
  local lines = io.lines
  if lines then
    function io.lines(path, ...)
      if path == nil then return lines(path, ...) end  -- standard input, already empty
      local iterate, a, b, f = lines(path, ...)
      if f and held(f, "io.lines", path) then return lines("/dev/null", ...) end
      return iterate, a, b, f
    end
  end
  function io.output(file, ...)
    local t = type(file)
    if t == "string" or t == "number" then
      local _, message = refuse("io.output", "writing", file)
      error(message, 2)
    end
    return output(file, ...)
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
    function io.input(file, ...)
      local t = type(file)
      if t ~= "string" and t ~= "number" then return input(file, ...) end
      local f = input(file, ...)  -- opened (or raised) as Lua does, and made the default input
      if rawequal(f, empty) or not held_back(f) then return f end
      input(empty)
      held(f, "io.input", file)
      return empty
    end
  end
  if io.popen then
    function io.popen(cmd, mode)
      local text = command(cmd, "io.popen", 1)
      local m = mode == nil and "r" or mode
      if m ~= "r" and m ~= "w" then error("bad argument #2 to 'io.popen' (invalid mode)", 2) end
      note("io.popen: " .. text, true)
      return null_handle(m)  -- reads nothing, takes writes; closes with true, "exit", 0
    end
  end
end

-- Text chunks only (a binary chunk can break the VM's invariants, and so run anything).
function G.load(chunk, name, _, ...)
  if select("#", ...) > 0 then return raw_load(chunk, name, "t", ...) end
  return raw_load(chunk, name, "t")
end
if raw_loadfile then
  function G.loadfile(path, _, ...)
    if select("#", ...) > 0 then return raw_loadfile(path, "t", ...) end
    return raw_loadfile(path, "t")
  end
  local loadfile = G.loadfile
  function G.dofile(path)
    local f, message = loadfile(path)
    if not f then error(message, 2) end
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
    searchers[3] = function(name) return "\n\t(dry run) C module '" .. name .. "' not loaded" end
    for i = 4, #searchers do searchers[i] = function() return nil end end
  end
end

if G.debug then
  local debug = G.debug
  G.debug = { traceback = debug.traceback, getinfo = debug.getinfo, gethook = debug.gethook,
              getmetatable = debug.getmetatable, getuservalue = debug.getuservalue }
  if G.package and G.package.loaded then G.package.loaded.debug = G.debug end
end
