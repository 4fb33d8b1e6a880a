// BustedRuntime: the Lua source of busted's describe/it, collection and planning for `taskrun test`.

/// Loaded with chunk name "=[busted]"; receives the host functions and luassert, returns
/// the runtime (`collect(path)`, `plan(options)`).
let bustedSource = #"""
local host, luassert = ...
local operation = operation
local say, spy, stub, mock, match = luassert.say, luassert.spy, luassert.stub, luassert.mock, luassert.match
local assert = luassert.assert
local failure_mt = luassert.failure_mt

local pending_mt = { __tostring = function(e) return e.message end }

-- A block: the root, a file, a describe/context, an insulate or expose block.
local function new_block(kind, name, parent, where)
  return {
    kind = kind, name = name, parent = parent, children = {},
    before_each = {}, after_each = {}, setup = {}, teardown = {}, strict = {},
    file = where and where.file, line = where and where.line,
  }
end

local root = new_block("root")
local current = root      -- the block being collected
local running = setmetatable({}, { __mode = "k" })  -- the tests being run, by coroutine
local function current_test() return running[coroutine.running()] end

-- Where a declaration is in the spec file.
local function position(level)
  local info = debug.getinfo(level + 1, "Sl")
  return { file = info and info.short_src or "?", line = info and info.currentline or 0 }
end

-- The global state a file (or an insulate block) sees: _G and package.loaded, shallow.
local function snapshot()
  local globals, loaded = {}, {}
  for k, v in next, _G do globals[k] = v end
  for k, v in next, package.loaded do loaded[k] = v end
  return { globals = globals, loaded = loaded }
end
local function restore_table(t, saved)
  for k in next, t do if saved[k] == nil then rawset(t, k, nil) end end
  for k, v in next, saved do if rawget(t, k) ~= v then rawset(t, k, v) end end
end
local function restore(world)
  restore_table(_G, world.globals)
  restore_table(package.loaded, world.loaded)
end
-- What `after` changed relative to `before`, applied to another snapshot (expose).
local function export(before, after, into)
  for _, part in ipairs { "globals", "loaded" } do
    for k, v in next, after[part] do if before[part][k] ~= v then into[part][k] = v end end
    for k in next, before[part] do if after[part][k] == nil then into[part][k] = nil end end
  end
end

local function describe_error(e)
  if type(e) == "table" and (getmetatable(e) == failure_mt or getmetatable(e) == pending_mt) then return e.message end
  if type(e) == "string" then return e end
  local mt = getmetatable(e)
  if mt and mt.__tostring then return tostring(e) end
  return luassert.format(e)
end

-- A traceback without the runtime's own frames (they mean nothing to a spec's author).
local function clean_traceback(trace)
  local lines = {}
  for line in trace:gmatch("[^\n]+") do
    if not (line:find("%[busted%]") or line:find("%[luassert%]") or line:find("in function 'xpcall'")
            or line:find("%(%.%.%.tail calls%.%.%.%)")) then
      lines[#lines + 1] = line
    end
  end
  return #lines > 1 and table.concat(lines, "\n") or nil
end

local function collect_block(block, fn)
  local previous = current
  current = block
  local isolated = block.kind == "file" or block.kind == "insulate" or block.kind == "expose"
  if isolated then block.base = snapshot() end
  local ok, err = xpcall(fn, function(e)
    return { message = describe_error(e), trace = clean_traceback(debug.traceback("", 2)) }
  end)
  if not ok then
    block.error, block.trace = err.message, err.trace
  end
  if isolated then
    block.world = snapshot()
    restore(block.base)
    if block.kind == "expose" then
      -- Its changes outlive it: every enclosing isolated block keeps them.
      local outer = block.parent
      while outer do
        if outer.base then export(block.base, block.world, outer.base) end
        if outer.world then export(block.base, block.world, outer.world) end
        outer = outer.parent
      end
    end
  end
  current = previous
end

local function block_function(kind)
  return function(name, fn)
    if current_test() then error(kind .. " cannot be used inside a running test", 2) end
    if type(name) == "function" and fn == nil then name, fn = "", name end
    if type(fn) ~= "function" then
      error(kind .. "('" .. tostring(name) .. "', fn): a function was expected, got " .. type(fn), 2)
    end
    local block = new_block(kind, tostring(name), current, position(2))
    table.insert(current.children, block)
    collect_block(block, fn)
  end
end

local function test_function(kind)
  return function(name, fn)
    if current_test() then error(kind .. " cannot be used inside a running test", 2) end
    if fn ~= nil and type(fn) ~= "function" then
      error(kind .. "('" .. tostring(name) .. "', fn): a function was expected, got " .. type(fn), 2)
    end
    local where = position(2)
    table.insert(current.children, {
      kind = "test", name = tostring(name), fn = fn, parent = current,
      file = where.file, line = where.line, pending = fn == nil,
    })
  end
end

local function pending(name)
  if current_test() then
    -- pending() inside a test: it stops here and counts as pending
    error(setmetatable({ message = tostring(name or "pending") }, pending_mt), 2)
  end
  local where = position(2)
  table.insert(current.children, {
    kind = "test", name = tostring(name), parent = current, file = where.file, line = where.line,
    pending = true,
  })
end

local function hook(list)
  return function(fn)
    if type(fn) ~= "function" then error("a function was expected, got " .. type(fn), 2) end
    if current_test() then error("hooks cannot be added inside a running test", 2) end
    table.insert(current[list], fn)
  end
end

local function strict_setup(fn)
  hook("setup")(fn)
  current.strict_setup = true
end

local function finally(fn)
  local test = current_test()
  if not test then error("finally can only be used inside a test", 2) end
  table.insert(test.finally, fn)
end

local function randomize() current.randomize = true end

local busted = {
  describe = block_function("describe"), context = block_function("context"),
  insulate = block_function("insulate"), expose = block_function("expose"),
  it = test_function("it"), spec = test_function("spec"), test = test_function("test"),
  pending = pending,
  before_each = hook("before_each"), after_each = hook("after_each"),
  setup = hook("setup"), lazy_setup = hook("setup"), strict_setup = strict_setup,
  teardown = hook("teardown"), lazy_teardown = hook("teardown"), strict_teardown = hook("teardown"),
  finally = finally, randomize = randomize,
  assert = assert, spy = spy, stub = stub, mock = mock, match = match, say = say,
}

for name, value in pairs(busted) do _G[name] = value end
package.preload["busted"] = function() return busted end
package.preload["luassert"] = function() return assert end
package.preload["luassert.spy"] = function() return spy end
package.preload["luassert.stub"] = function() return stub end
package.preload["luassert.mock"] = function() return mock end
package.preload["luassert.match"] = function() return match end
package.preload["luassert.say"] = function() return say end
package.preload["say"] = function() return say end
package.path = "./?.lua;./?/init.lua;./src/?.lua;./src/?/init.lua;" .. package.path

---------------------------------------------------------------------------------------------
-- Collecting a file

local runtime = {}

-- Runs a spec file's top level (its describe bodies too) and keeps what it declares.
function runtime.collect(path)
  local chunk, err = loadfile(path, "t")
  local block = new_block("file", path, root, { file = path, line = 0 })
  table.insert(root.children, block)
  if chunk then collect_block(block, chunk) else block.error = err end
  if block.error then block.line = tonumber(block.error:match(":(%d+):")) or 0 end
end

---------------------------------------------------------------------------------------------
-- Planning: filter, shuffle, and one operation per test

local function tags_of(name, into)
  for tag in name:gmatch("#([%w_%-]+)") do into[tag] = true end
  return into
end

local function full_name(node)
  local parts = {}
  local block = node.parent
  while block and block.kind ~= "root" do
    if block.kind ~= "file" and block.name ~= "" then table.insert(parts, 1, block.name) end
    block = block.parent
  end
  parts[#parts + 1] = node.name
  return table.concat(parts, " ")
end

-- A small seeded generator, so a printed seed reproduces the order on any Lua.
local function generator(seed)
  local state = seed % 2147483647
  if state <= 0 then state = state + 2147483646 end
  return function(n)
    state = (state * 48271) % 2147483647
    return state % n + 1
  end
end

local function shuffle(list, random)
  for i = #list, 2, -1 do
    local j = random(i)
    list[i], list[j] = list[j], list[i]
  end
end

-- The tests to run, in order, each with the blocks it enters and leaves.
local function flatten(block, options, random, out)
  local children = { table.unpack(block.children) }
  if random or block.randomize then shuffle(children, random or generator(os.time())) end
  for _, child in ipairs(children) do
    if child.kind == "test" then
      local name = full_name(child)
      local tags = {}
      local b = child.parent
      while b do if b.name then tags_of(b.name, tags) end b = b.parent end
      tags_of(child.name, tags)
      local keep = true
      if #options.filter > 0 then
        keep = false
        for _, pattern in ipairs(options.filter) do if name:find(pattern) then keep = true end end
      end
      for _, pattern in ipairs(options.filter_out) do if name:find(pattern) then keep = false end end
      if #options.tags > 0 then
        local any = false
        for _, tag in ipairs(options.tags) do if tags[tag] then any = true end end
        keep = keep and any
      end
      for _, tag in ipairs(options.exclude_tags) do if tags[tag] then keep = false end end
      if keep then
        child.full_name, child.tags = name, tags
        out[#out + 1] = child
      end
    else
      if child.error then
        -- A file that does not load, or a describe body that fails: one error of its own
        out[#out + 1] = {
          kind = "error", name = child.name,
          full_name = child.kind == "file" and child.name or full_name(child),
          file = child.file, line = child.line, parent = child.parent, message = child.error,
          trace = child.trace, tags = {},
        }
      end
      flatten(child, options, random, out)
    end
  end
  return out
end

-- Blocks from the root down to (not including) a test.
local function ancestors(test)
  local list = {}
  local block = test.parent
  while block and block.kind ~= "root" do
    table.insert(list, 1, block)
    block = block.parent
  end
  return list
end

-- Runs fn; the first failure is kept as { kind = "failure"|"error"|"pending", message, trace }.
local function guarded(fn, outcome, ...)
  local ok, err = xpcall(fn, function(e)
    local kind = "error"
    if type(e) == "table" and getmetatable(e) == failure_mt then kind = "failure" end
    if type(e) == "table" and getmetatable(e) == pending_mt then kind = "pending" end
    return { kind = kind, message = describe_error(e),
             trace = kind == "error" and clean_traceback(debug.traceback("", 2)) or nil }
  end, ...)
  if not ok and outcome.kind == nil then
    outcome.kind, outcome.message, outcome.trace = err.kind, err.message, err.trace
  end
  return ok
end

local function enter(block, outcome)
  if block.world then restore(block.world) end
  block.snapshot = assert:snapshot()
  for _, fn in ipairs(block.setup) do
    if not guarded(fn, outcome) then return end
  end
end

local function leave(block, outcome)
  for _, fn in ipairs(block.teardown) do guarded(fn, outcome) end
  if block.snapshot then block.snapshot.revert() end
  if block.base then restore(block.base) end
end

local function run_test(test, op)
  local outcome = {}
  for _, block in ipairs(test.enters) do enter(block, outcome) end
  if test.kind == "error" then
    outcome.kind, outcome.message, outcome.trace = "error", test.message, test.trace
  elseif outcome.kind == nil and not test.pending then
    local blocks = ancestors(test)
    local snapshot = assert:snapshot()
    local co = coroutine.running()
    local state = { finally = {} }
    running[co] = state
    local ok = true
    for _, block in ipairs(blocks) do
      for _, fn in ipairs(block.before_each) do
        ok = ok and guarded(fn, outcome)
      end
    end
    if ok then guarded(test.fn, outcome) end
    for i = #blocks, 1, -1 do
      for _, fn in ipairs(blocks[i].after_each) do guarded(fn, outcome) end
    end
    for _, fn in ipairs(state.finally) do guarded(fn, outcome) end
    running[co] = nil
    snapshot.revert()
  elseif test.pending and outcome.kind == nil then
    outcome.kind, outcome.message = "pending", test.pending_message or "pending"
  end
  for i = #test.leaves, 1, -1 do leave(test.leaves[i], outcome) end
  if outcome.kind == nil then
    host.status(op, "passed")
  elseif outcome.kind == "pending" then
    host.status(op, "pending", outcome.message)
    host.skip(op, outcome.message)
  else
    host.status(op, outcome.kind, outcome.message, outcome.trace)
    error(outcome.message, 0)
  end
end

-- Makes the operations: options = { filter, filter_out, tags, exclude_tags, seed, timeout }.
function runtime.plan(options)
  local random = options.seed and generator(options.seed) or nil
  local tests = flatten(root, options, random, {})
  -- Which blocks each test enters (its first) and leaves (its last)
  local first, last = {}, {}
  for i, test in ipairs(tests) do
    for _, block in ipairs(ancestors(test)) do
      first[block] = first[block] or i
      last[block] = i
    end
  end
  for i, test in ipairs(tests) do
    test.enters, test.leaves = {}, {}
    for _, block in ipairs(ancestors(test)) do
      if first[block] == i then table.insert(test.enters, block) end
      if last[block] == i then table.insert(test.leaves, block) end
    end
  end
  local used = {}
  local anchor, since = nil, {}
  for _, test in ipairs(tests) do
    local name = test.full_name
    if name == "" then name = test.file .. ":" .. test.line end
    if used[name] then
      local n = 2
      while used[name .. " (" .. n .. ")"] do n = n + 1 end
      name = name .. " (" .. n .. ")"
    end
    used[name] = true
    local parallel = test.tags.parallel
    local after = {}
    if anchor then after[1] = anchor end
    if not parallel then for _, op in ipairs(since) do after[#after + 1] = op end end
    local op = operation {
      name = name, after = after, when = "finished", timeout = options.timeout,
      run = function(self) return run_test(test, self) end,
    }
    host.case(op, test.full_name ~= "" and test.full_name or name, test.file, test.line)
    if parallel then since[#since + 1] = op else anchor, since = op, {} end
  end
  return #tests
end

return runtime
"""#
