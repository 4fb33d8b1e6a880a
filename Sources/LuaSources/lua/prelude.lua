-- prelude.lua: the Lua half of the host. Blocking primitives yield from Lua, never from C.
-- Loaded once per state as "=[taskrun]"; receives the request sentinel, the table of globals
-- to define, the method tables of operations and queues, the watchdog's enter/leave and
-- `escape` (marks the running coroutine's thread as held by Lua code).
local REQ, api, op_methods, queue_methods, enter, leave, escape = ...
local yield, resume, create, status = coroutine.yield, coroutine.resume, coroutine.create, coroutine.status
local error, select = error, select

local getinfo = debug.getinfo

-- The level (as `error` counts from check) of the first Lua function calling a primitive:
-- wrappers tail-call await and await tail-calls check, so it is 2, or more when a C function
-- such as pcall called the primitive directly (`pcall(sleep, 1)`).
local function where()
  local level = 3  -- 1 is where, 2 is check
  while true do
    local info = getinfo(level, "S")
    if not info then return 2 end
    if info.what ~= "C" then return level - 1 end
    level = level + 1
  end
end

-- The scheduler answers a request with true, results... or false, message[, placed]: a
-- placed message already says where (a name given earlier in `after`).
local function check(ok, ...)
  if not ok then
    local message, placed = ...
    error(message, placed and 0 or where())
  end
  return ...
end
-- Where nothing can yield (an observer, a handler, a condition's dependency, a metamethod
-- called from C), a primitive raises at the caller's line, as Lua's own yield error would.
local isyieldable = coroutine.isyieldable
local function await(kind, ...)
  if not isyieldable() then
    error("attempt to yield across a C-call boundary (" .. (kind == "wait_queue" and "wait" or kind)
      .. " waits only in a body, a condition's evaluate or the top level)", where())
  end
  return check(yield(REQ, kind, ...))
end

function api.sleep(seconds) return await("sleep", seconds) end
function api.sh(command, options) return await("sh", command, options) end
function api.wait(...) return await("wait", ...) end
function api.run(...) return await("run", ...) end
function api.choose(question, choices, options) return await("choose", question, choices, options) end
function op_methods.wait(op) return await("wait", op) end
function queue_methods.wait(queue) return await("wait_queue", queue) end

-- os.execute waits by yielding wherever sh() could (a body, the top level, a coroutine of
-- theirs), so other operations run meanwhile; elsewhere (a metamethod, an observer) it
-- blocks as Lua's does. A bad argument is raised here, at the caller's line (from the host's
-- function it would name this wrapper's line).
local host_execute = os and os.execute
if host_execute then
  local getmetatable, rawget, format = debug.getmetatable, rawget, string.format
  function os.execute(command)
    local t = type(command)
    if (t == "string" or t == "number") and isyieldable() then
      return check(yield(REQ, "execute", command))
    end
    if t ~= "string" and t ~= "number" and t ~= "nil" then
      local meta = getmetatable(command)
      local name = type(meta) == "table" and rawget(meta, "__name")
      error(format("bad argument #1 to 'os.execute' (string expected, got %s)",
        type(name) == "string" and name or t), 2)
    end
    -- Its errors (a stop while it waits) are raised at the caller's line, not this one.
    local results = table.pack(pcall(host_execute, command))
    if not results[1] then error(results[2], 2) end
    return table.unpack(results, 2, results.n)
  end
end

-- A request made inside the script's own coroutine is passed up to the scheduler and the
-- answer passed back down, so sh/sleep/wait work inside coroutine.wrap too. enter/leave
-- tell the watchdog which coroutine runs, so a loop inside one can be interrupted.
local pass
local function again(co, ...)
  enter(co)
  return pass(co, resume(co, ...))
end
function pass(co, ok, first, ...)
  leave()
  if ok and first == REQ then return again(co, yield(REQ, ...)) end
  return ok, first, ...
end
coroutine.resume = again
-- coroutine.close runs the coroutine's __close methods on its own thread: watched as a resume is.
-- Its errors are raised here, in Lua's words, at the caller's line.
local close = coroutine.close
function coroutine.close(...)
  local co = ...
  if type(co) ~= "thread" then
    local got = select("#", ...) == 0 and "no value" or type(co)
    error("bad argument #1 to 'close' (thread expected, got " .. got .. ")", 2)
  end
  local state = status(co)
  if state ~= "suspended" and state ~= "dead" then error("cannot close a " .. state .. " coroutine", 2) end
  enter(co)
  return (function(...) leave() return ... end)(close(co))
end

-- As lua5.4's wrap: an error that ended the coroutine closes its pending variables (a
-- __close error replaces it), and a string gets the caller's position.
function coroutine.wrap(f)
  local co = create(f)
  local function finish(ok, ...)
    if not ok then
      local message = ...
      if status(co) == "dead" then
        enter(co)
        local closed, err = close(co)
        leave()
        if not closed then message = err end
      end
      error(message, message == "not enough memory" and 0 or 2)  -- lua5.4: no position on a memory error
    end
    return ...
  end
  return function(...) return finish(coroutine.resume(co, ...)) end
end

-- The host reuses the thread of a body that ended; one that Lua code was handed stays its own.
local running = coroutine.running
function coroutine.running()
  local co, main = running()
  escape()
  return co, main
end

-- io.write, io.stdout:write and io.stderr:write ask the host first: while a live view draws
-- below, it takes the text and prints whole lines above the view, as print's (file:write's
-- own checks and number format kept: floats as "%.14g"); standard error only while it is
-- the terminal the view draws on, else it is written as usual.
local captured_write = api.__write
api.__write = nil
if io then
  local stdout, stderr, output = io.stdout, io.stderr, io.output
  local methods = getmetatable(stdout).__index
  local raw_write = methods.write
  local function write(f, ...)
    local standard = rawequal(f, stdout) and 1 or rawequal(f, stderr) and 2
    if standard then
      local parts = {}
      for i = 1, select("#", ...) do
        local v = select(i, ...)
        local t = math.type(v)
        if t == "float" then parts[i] = string.format("%.14g", v)
        elseif t == "integer" or type(v) == "string" then parts[i] = tostring(v)
        else return raw_write(f, ...) end  -- the usual error
      end
      if captured_write(table.concat(parts), standard) then return f end
    end
    return raw_write(f, ...)
  end
  methods.write = write
  function io.write(...) return write(output(), ...) end
end

for name, value in pairs(api) do _G[name] = value end
package.loaded.taskrun = api
