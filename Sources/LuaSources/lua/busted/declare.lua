-- busted/declare.lua: busted's API for spec files (describe, it, hooks, pending, finally),
-- with the real luassert bound as busted binds it. Loaded as "=[busted]" with the host's
-- test functions and the runtime table shared by the busted/*.lua chunks.
local host, T = ...

local function need(name)
  local ok, module = pcall(require, name)
  if not ok then
    error("taskrun test needs luassert and say for Lua 5.4 (" .. tostring(module):match("^[^\n]*") .. ")\n"
      .. "  Debian/Ubuntu: apt-get install lua-luassert lua-say\n"
      .. "  LuaRocks:      luarocks --lua-version 5.4 install luassert", 0)
  end
  return module
end
local assert = need("luassert")
local spy, stub, mock, match = need("luassert.spy"), need("luassert.stub"), need("luassert.mock"), need("luassert.match")
T.assert = assert

-- Errors as busted types them: a failed assertion is a failure, pending() is pending, the
-- rest are errors (busted/core.lua).
local failure_mt = { __index = {}, __tostring = function(e) return tostring(e.message) end, __type = "failure" }
local failure_plain_mt = { __index = {}, __type = "failure" }
local pending_mt = { __index = {}, __tostring = function(p) return p.message end, __type = "pending" }
local function has_tostring(v)
  return type(v) == "string" or (debug.getmetatable(v) or {}).__tostring ~= nil
end
function T.error_kind(e)
  local mt = debug.getmetatable(e)
  if mt == failure_mt or mt == failure_plain_mt then return "failure" end
  if mt == pending_mt then return "pending" end
  return "error"
end

local function fail(message, level)
  local raw = (type(level) ~= "number" or level <= 0) and level
  level = level or 1
  local _, positioned = pcall(error, message, raw or level + 2)
  error(setmetatable({ message = positioned }, has_tostring(message) and failure_mt or failure_plain_mt), raw or level + 1)
end

local function pending_error(message)
  error(setmetatable({ message = message }, pending_mt))
end

-- busted.bindfenv: gives `callable` (its __call) its own _ENV in which `name` is `value`.
local function bindfenv(callable, name, value)
  local f = (debug.getmetatable(callable) or {}).__call or callable
  local up = 0
  repeat
    up = up + 1
    local key = debug.getupvalue(f, up)
  until key == "_ENV" or key == nil
  if debug.getupvalue(f, up) == nil then return end
  local _, env = debug.getupvalue(f, up)
  local bound = setmetatable({ [name] = value }, { __index = env })
  debug.upvaluejoin(f, up, function() return bound end, 1)
end
bindfenv(assert, "error", fail)
bindfenv(assert.is_true, "error", fail)

-- Where a declaration is in the spec file (made in T.current's body), as busted's getTrace
-- finds it: the first caller that is not C, luassert or this runtime. A declaration made
-- by a tail call (MoonScript's implicit return) has none: busted names its own program.
local function position(level)
  level = level + 1
  local info = debug.getinfo(level, "Sl")
  while info and (info.what == "C" or info.short_src:find("luassert[/\\]")
                  or info.source == "=[busted]" or info.source == "=[taskrun]") do
    level = level + 1
    info = debug.getinfo(level, "Sl")
  end
  local where = info and { file = info.short_src, line = info.currentline } or { file = T.options.program, line = 0 }
  return T.rewrite_position(T.current, where)  -- busted/loaders.lua: a .moon spec's line
end
T.position = position

-- A block; `descriptor` and `trace` are what busted's event subscribers read of it.
function T.new_block(kind, name, parent, fn, where)
  return {
    kind = kind, name = name, parent = parent, fn = fn, children = {}, unwrap = kind == "expose" and 2 or nil,
    before_each = {}, after_each = {}, setup = {}, teardown = {}, lazy_setup = {}, lazy_teardown = {},
    file = where.file, line = where.line,
    descriptor = kind, trace = { short_src = where.file, currentline = where.line },
  }
end

-- A node's full name as busted's getFullName builds it: the names of its blocks below the
-- file, then its own, joined by spaces.
function T.full_name(node)
  local parts = { node.name }
  local block = node.parent
  while block and block.kind ~= "file" do
    table.insert(parts, 1, block.name)
    block = block.parent
  end
  return table.concat(parts, " ")
end

-- The running tests, by coroutine (finally and pending() look them up).
local running = setmetatable({}, { __mode = "k" })
T.running = running
local function current_test() return running[coroutine.running()] end

local function declaring(kind, level)
  if current_test() then error("'" .. kind .. "' not supported inside current context block", level + 1) end
  if not T.current then error(kind .. " can only be used in a spec file or a describe block", level + 1) end
end

-- busted's registration filters (busted/modules/filter_loader.lua): a block or test that
-- --filter-out or --exclude-tags names is never declared (its body does not run); a test
-- needs --filter and --tags to name it, when they are given.
local function has_tag(name, tag) return name:find("#" .. tag) ~= nil end
local function admitted(kind, name, full)
  local o = T.options
  for _, tag in ipairs(o.exclude_tags) do if has_tag(name, tag) then return false end end
  for _, pattern in ipairs(o.filter_out) do if full:find(pattern) then return false end end
  if kind ~= "test" then return true end
  if #o.tags > 0 then
    local any = false
    for _, tag in ipairs(o.tags) do if has_tag(full, tag) then any = true end end
    if not any then return false end
  end
  if #o.filter > 0 then
    local any = false
    for _, pattern in ipairs(o.filter) do if full:find(pattern) then any = true end end
    if not any then return false end
  end
  return true
end

local function add(node)
  if admitted(node.kind, node.name, T.full_name(node)) then table.insert(T.current.children, node) end
end

local function block_function(kind)
  return function(name, fn)
    declaring(kind, 2)
    if type(name) == "function" and fn == nil then name, fn = kind, name end
    if type(fn) ~= "function" then
      error(kind .. "('" .. tostring(name) .. "', fn): a function was expected, got " .. type(fn), 2)
    end
    add(T.new_block(kind, tostring(name), T.current, fn, position(2)))
  end
end

local function test_node(name, fn, where)
  return { kind = "test", name = tostring(name), fn = fn, parent = T.current,
           file = where.file, line = where.line, pending = fn == nil,
           descriptor = fn == nil and "pending" or "it", trace = { short_src = where.file, currentline = where.line } }
end

local function test_function(kind)
  return function(name, fn)
    declaring(kind, 2)
    if type(name) == "function" and fn == nil then name, fn = kind, name end
    if fn ~= nil and type(fn) ~= "function" then
      error(kind .. "('" .. tostring(name) .. "', fn): a function was expected, got " .. type(fn), 2)
    end
    add(test_node(name, fn, position(2)))
  end
end

local function pending(name)
  if current_test() then pending_error(name) end  -- inside a test: it stops here, pending
  declaring("pending", 2)
  add(test_node(name == nil and "pending" or name, nil, position(2)))
end

local function hook(list, word)
  return function(fn)
    declaring(word, 2)
    if type(fn) ~= "function" then error(word .. ": a function was expected, got " .. type(fn), 2) end
    table.insert(T.current[list], { fn = fn, word = word, where = position(2) })
  end
end

-- busted keeps one finally per test: the last one given.
local function finally(fn)
  local test = current_test()
  if not test then error("'finally' not supported inside current context block", 2) end
  test.finally = fn
end

local function randomize(...)
  declaring("randomize", 2)
  T.current.randomize = select("#", ...) == 0 or (...)
  T.current.seed = tonumber((select(1, ...))) or tonumber((select(2, ...)))
end

-- busted's event channels (mediator_lua), for helpers that subscribe to them: a channel such
-- as { "test", "end" } calls its callbacks in order (a `predicate` option filters, a
-- `priority` option is the position), then its parents' ({ "test" }, then all); a callback
-- that returns no second value true stops the rest, as in mediator.
local channels = { callbacks = {}, children = {} }
local function channel(path)
  local node = channels
  for _, name in ipairs(path) do
    node.children[name] = node.children[name] or { callbacks = {}, children = {}, parent = node }
    node = node.children[name]
  end
  return node
end
local function subscribe(path, fn, options)
  local list = channel(type(path) == "table" and path or { path }).callbacks
  local callback = { fn = fn, options = options or {} }
  table.insert(list, math.max(1, math.min(tonumber(callback.options.priority) or #list + 1, #list + 1)), callback)
  callback.id = callback
  return callback
end
local function unsubscribe(path, id)
  local list = channel(type(path) == "table" and path or { path }).callbacks
  for i = #list, 1, -1 do if list[i] == id or list[i].id == id then table.remove(list, i) end end
end
function T.publish(path, ...)
  local node = channel(path)
  while node do
    for _, callback in ipairs({ table.unpack(node.callbacks) }) do
      if not callback.options.predicate or callback.options.predicate(...) then
        local _, continue = callback.fn(...)
        if not continue then return end
      end
    end
    node = node.parent
  end
end

local busted = {
  describe = block_function("describe"), context = block_function("context"),
  insulate = block_function("insulate"), expose = block_function("expose"),
  it = test_function("it"), spec = test_function("spec"), test = test_function("test"),
  pending = pending,
  before_each = hook("before_each", "before_each"), after_each = hook("after_each", "after_each"),
  setup = hook("setup", "setup"), strict_setup = hook("setup", "strict_setup"),
  lazy_setup = hook("lazy_setup", "lazy_setup"),
  teardown = hook("teardown", "teardown"), strict_teardown = hook("teardown", "strict_teardown"),
  lazy_teardown = hook("lazy_teardown", "lazy_teardown"),
  finally = finally, randomize = randomize,
  assert = assert, spy = spy, stub = stub, mock = mock, match = match,
}
T.globals = busted
T.pending_error = pending_error

-- What require "busted" gives besides the globals (busted/init.lua's exportApi).
local api = setmetatable({
  fail = fail, version = "2.1.1", bindfenv = bindfenv,
  gettime = os.time, monotime = os.clock,
  sleep = function(seconds) return sleep(seconds) end,
  subscribe = subscribe, unsubscribe = unsubscribe, publish = T.publish,
}, { __index = busted })

-- busted's environments (busted/environment.lua): spec files run with their own _ENV, so a
-- module they require sees the plain globals (its `assert` is Lua's). A name is looked up in
-- the running element, then its blocks, then the API, then _G; a global a spec assigns goes
-- to the running element (a hook's to its block, an expose block's two blocks up), so it is
-- seen by what that element contains and by nothing else.
-- The suite: a helper's hooks (busted.before_each, setup, …) are its own, around every file.
local root = T.new_block("root", "", nil, nil, { file = "?", line = 0 })
root.env = {}
T.root = root
local contexts = setmetatable({}, { __mode = "k" })  -- the running element, by coroutine
local last_context = nil
local function context() return contexts[coroutine.running()] or last_context end

-- Makes `element` the running element of this coroutine; returns the one to put back.
function T.enter(element)
  local co = coroutine.running()
  local previous = contexts[co]
  contexts[co], last_context = element, element
  return previous
end
function T.leave(previous)
  contexts[coroutine.running()] = previous
end

local function parent_of(element)
  if element.kind == "file" then return root end
  return element.parent
end

T.env = setmetatable({}, {
  __index = function(_, key)
    local element = context()
    while element do
      local env = element.env
      if env then
        local value = env[key]
        if value ~= nil then return value end
      end
      element = parent_of(element)
    end
    return _G[key]
  end,
  __newindex = function(_, key, value)
    local target = context()
    for _ = 1, target and target.unwrap or 0 do target = target and parent_of(target) end
    if not target then rawset(_G, key, value) return end
    target.env = target.env or {}
    target.env[key] = value
  end,
})

function T.install_globals()
  for name, value in pairs(busted) do root.env[name] = value end
  package.loaded["busted"] = api
end
