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

-- A block; `descriptor` and `trace` are what busted's event subscribers read of it (an alias
-- has its word's descriptor; the suite's is "suite").
local descriptors = { context = "describe", insulate = "describe", expose = "describe", root = "suite" }
function T.new_block(kind, name, parent, fn, where)
  return {
    kind = kind, name = name, parent = parent, fn = fn, children = {}, declared = {},
    unwrap = kind == "expose" and 2 or nil, depth = parent and (parent.depth or 0) + 1 or 0,
    before_each = {}, after_each = {}, setup = {}, teardown = {}, lazy_setup = {}, lazy_teardown = {},
    file = where.file, line = where.line,
    descriptor = descriptors[kind] or kind, trace = { short_src = where.file, currentline = where.line },
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
  for _, excluded in ipairs(o.exclude_names) do if full == excluded then return false end end
  for _, pattern in ipairs(o.filter_out) do if full:find(pattern) then return false end end
  if #o.names > 0 then  -- --name: one of them contains the full name
    local any = false
    for _, candidate in ipairs(o.names) do if candidate:find(full, 1, true) then any = true end end
    if not any then return false end
  end
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

-- What a block declared, hooks included, in order: busted shuffles and sorts this list, so
-- its length and order decide which permutation a seed gives.
local function add(node)
  if admitted(node.kind, node.name, T.full_name(node)) then
    table.insert(T.current.children, node)
    table.insert(T.current.declared, node)
  end
end

local function callable(v)
  return type(v) == "function" or (debug.getmetatable(v) or {}).__call ~= nil
end

-- busted's declarations (busted/core.lua's register): `word(name, fn)` declares at once;
-- `word(fn)` names it after the word; without a function, `word(name)` declares nothing and
-- returns a function that declares `name` with the function it is given, so the curried
-- `describe 'name' (function() … end)` works and a lone `it('x')` is dropped, as in busted.
local function declaration(word, declare)
  return function(name, fn)
    declaring(word, 2)
    if fn == nil and callable(name) then name, fn = word, name end
    local where = position(2)
    local function with(f, level)
      if not callable(f) then
        error(word .. "('" .. tostring(name) .. "', fn): a function was expected, got " .. type(f), level + 1)
      end
      declare(name, f, where)
    end
    if fn == nil then
      return function(f)
        declaring(word, 2)
        with(f, 2)
      end
    end
    with(fn, 2)
  end
end

-- How deep blocks may nest: busted stops near here too (Lua's C stack, about 200 calls).
local max_depth = 200

local function block_function(kind)
  return declaration(kind, function(name, fn, where)
    if (T.current.depth or 0) >= max_depth then
      error(where.file .. ":" .. where.line .. ": blocks nest more than " .. max_depth .. " deep", 0)
    end
    add(T.new_block(kind, tostring(name), T.current, fn, where))
  end)
end

local function test_node(name, fn, where)
  return { kind = "test", name = tostring(name), fn = fn, parent = T.current,
           file = where.file, line = where.line, pending = fn == nil,
           descriptor = fn == nil and "pending" or "it", trace = { short_src = where.file, currentline = where.line } }
end

local function test_function(kind)
  return declaration(kind, function(name, fn, where) add(test_node(name, fn, where)) end)
end

-- pending('name') declares at once (busted gives it a default function): `pending 'x' (fn)`
-- calls what pending returns, nothing, as in busted. Inside a test, `pending` is busted's
-- pending(message) (see T.test_env); this one raises it too when a test calls it by another
-- name.
local function pending(name)
  if current_test() then pending_error(name) end
  declaring("pending", 2)
  add(test_node(name == nil and "pending" or name, nil, position(2)))
end

-- A hook is a declaration too (`before_each 'name' (fn)`); a name given is the hook's name
-- in what busted reports of it. `setup` and `teardown` are busted's aliases (so named when
-- sorted), strict unless --lazy. Its entry in the block's `declared` list is busted's element
-- for it (busted.children gives it): the descriptor of the hook it is (`strict_setup` for
-- `setup`), the alias or the given name as its name (else none), where it was declared.
local aliases = { setup = "lazy_setup", teardown = "lazy_teardown" }
local strict = { setup = "strict_setup", teardown = "strict_teardown" }
local function hook(list, word)
  return declaration(word, function(name, fn, where)
    local target = T.options and T.options.lazy and aliases[word] or list
    table.insert(T.current[target], { fn = fn, word = type(name) == "string" and name or word, where = where })
    local named = name ~= word or aliases[word] ~= nil
    local descriptor = word
    if strict[word] then descriptor = target == list and strict[word] or target end
    table.insert(T.current.declared, {
      hook = true, name = named and tostring(name) or nil, descriptor = descriptor,
      attributes = { envmode = "unwrap" }, trace = { short_src = where.file, currentline = where.line },
    })
  end)
end

-- The words a test, its finally and hooks may not call (busted/block.lua's rejectAll): each
-- raises "'word' not supported inside current context block".
local function reject(word)
  return function() error("'" .. word .. "' not supported inside current context block", 2) end
end
local rejected = {
  "describe", "context", "insulate", "expose", "it", "spec", "test", "pending",
  "before_each", "after_each", "setup", "teardown", "strict_setup", "strict_teardown",
  "lazy_setup", "lazy_teardown", "randomize",
}
local rejections = {}  -- a hook's names (what it assigns goes to its block)
for _, word in ipairs(rejected) do rejections[word] = reject(word) end
T.rejections = rejections
local rejections_mt = { __index = rejections }

-- A test's own names (busted/init.lua's it): the rejections, `pending` (busted.pending) and
-- `finally` (busted keeps one per test: the last one given). Inside the finally function,
-- `pending` is rejected too.
function T.test_env(state)
  return setmetatable({
    pending = pending_error,
    finally = function(fn) state.finally = fn end,
  }, rejections_mt)
end
T.reject = reject

-- busted's randomize([flag][, seed]): the block's own choice, over --shuffle-tests.
local function randomize(...)
  declaring("randomize", 2)
  local on = select("#", ...) == 0 or (...)
  T.current.randomize = { on = on and true or false,
                          seed = on and (tonumber((select(1, ...))) or tonumber((select(2, ...)))) or nil }
end

-- busted's event channels (mediator_lua), for helpers that subscribe to them: a channel such
-- as { "test", "end" } calls its callbacks in order (a `predicate` option filters, a
-- `priority` option is the position), then its parents' ({ "test" }, then all); a callback
-- that returns no second value true stops the rest, as in mediator. subscribe returns the
-- subscriber (its `id`, `fn`, `options`, `update`); unsubscribe(id, channel) removes it from
-- that channel and the ones below and returns it; publish returns the callbacks' first
-- values.
local channels = { callbacks = {}, children = {} }
local function channel(path)
  local node = channels
  for _, name in ipairs(type(path) == "table" and path or { path }) do
    node.children[name] = node.children[name] or { callbacks = {}, children = {}, parent = node }
    node = node.children[name]
  end
  return node
end
local function subscribe(path, fn, options)
  local list = channel(path).callbacks
  local subscriber = {
    fn = fn, options = options or {},
    update = function(self, changes)
      if changes then
        self.fn = changes.fn or self.fn
        self.options = changes.options or self.options
      end
    end,
  }
  subscriber.id = tonumber(tostring(subscriber):match(":%s*[0xX]*(%x+)"), 16)
  local position = #list + 1
  local priority = tonumber(subscriber.options.priority)
  if priority and priority >= 1 and priority < position then position = math.floor(priority) end
  table.insert(list, position, subscriber)
  return subscriber
end
local function remove(node, id)
  local removed
  for i = #node.callbacks, 1, -1 do
    if node.callbacks[i].id == id then removed = table.remove(node.callbacks, i) end
  end
  for _, child in pairs(node.children) do removed = remove(child, id) or removed end
  return removed
end
local function unsubscribe(id, path)
  return remove(channel(path), id)
end
function T.publish(path, ...)
  local results = {}
  local node = channel(path)
  while node do
    for _, callback in ipairs({ table.unpack(node.callbacks) }) do
      if not callback.options.predicate or callback.options.predicate(...) then
        local value, continue = callback.fn(...)
        if value then results[#results + 1] = value end
        if not continue then return results end
      end
    end
    node = node.parent
  end
  return results
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
  randomize = randomize,
  assert = assert, spy = spy, stub = stub, mock = mock, match = match,
}
T.globals = busted
T.api_version = "2.1.1"
T.pending_error = pending_error

-- What require "busted" gives (busted/init.lua): the API (its exportApi: no `finally`, no
-- `randomize`), and nothing can be written to it.
local api = {
  fail = fail, version = T.api_version, bindfenv = bindfenv,
  gettime = os.time, monotime = os.clock,  -- luasystem's when it is there, as busted's
  sleep = function(seconds) return sleep(seconds) end,
  subscribe = subscribe, unsubscribe = unsubscribe, publish = T.publish,
  parent = function(element) return T.parent_of(element) end,
  children = function(element) return T.children_of(element) end,
}
for name, value in pairs(busted) do
  if name ~= "randomize" then api[name] = value end
end
local has_system, system = pcall(require, "system")
if has_system and type(system) == "table" and system.gettime and system.monotime then
  api.gettime, api.monotime = system.gettime, system.monotime
end
local module = setmetatable({}, {
  __index = api,
  __newindex = function() error("Attempt to modify busted", 2) end
})

-- busted's environments (busted/environment.lua): spec files run with their own _ENV, so a
-- module they require sees the plain globals (its `assert` is Lua's). A name is looked up in
-- the running element, then its blocks, then the API, then _G; a global a spec assigns goes
-- to the running element (a hook's to its block, an expose block's two blocks up), so it is
-- seen by what that element contains and by nothing else.
-- The suite: a helper's hooks (busted.before_each, setup, …) are its own, around every file.
-- busted's suite has no name (its descriptor is "suite")
local root = T.new_block("root", nil, nil, nil, { file = "?", line = 0 })
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
-- busted.parent and busted.children (busted/context.lua): a block's children are what it
-- declared, hooks included, in order (its `declared` list); the suite's are a helper's hooks,
-- then the files.
function T.parent_of(element)
  if type(element) ~= "table" or element == root then return nil end
  return parent_of(element)
end
function T.children_of(element)
  if type(element) ~= "table" then return {} end
  local list = {}
  for _, child in ipairs(element.declared or element.children or {}) do
    if element ~= root or child.hook then list[#list + 1] = child end
  end
  if element == root then
    for _, file in ipairs(root.files or {}) do list[#list + 1] = file end
  end
  return list
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
  package.loaded["busted"] = module
end
