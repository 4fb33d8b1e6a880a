// BustedRuntime: the Lua source of busted's describe/it for `taskrun test`: blocks run in busted's
// order, each test an operation.

/// Loaded with chunk name "=[busted]"; receives the host functions and luassert, returns
/// the runtime (`collect(path)` adds a spec file, `plan(options)` makes its operations).
let bustedSource = #"""
local host, luassert = ...
local operation, queue, wait = operation, queue, wait
local say, spy, stub, mock, match = luassert.say, luassert.spy, luassert.stub, luassert.mock, luassert.match
local assert = luassert.assert
local failure_mt = luassert.failure_mt

local pending_mt = { __tostring = function(e) return e.message end }

-- A block: a file, a describe/context, an insulate or expose block. Its function runs when
-- its turn comes (as in busted: after the tests declared before it), declaring its children.
local function new_block(kind, name, parent, fn, where)
  return {
    kind = kind, name = name, parent = parent, fn = fn, children = {},
    before_each = {}, after_each = {}, setup = {}, teardown = {},
    file = where.file, line = where.line,
  }
end

local files = {}                   -- file blocks, in the order given
local current = nil                 -- the block whose function is running (declaring)
local running = setmetatable({}, { __mode = "k" })  -- the tests being run, by coroutine
local function current_test() return running[coroutine.running()] end
-- Blocks wait for their children here, so a block never takes one of the -j slots.
local blocks = queue { name = "test blocks", max_concurrent = -1 }

-- Where a declaration is in the spec file.
local function position(level)
  local info = debug.getinfo(level + 1, "Sl")
  return { file = info and info.short_src or "?", line = info and info.currentline or 0 }
end

-- The global state a file (or an insulate block) changes: _G and package.loaded, shallow.
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
    if not (line:find("%[busted%]") or line:find("%[luassert%]") or line:find("%[taskrun%]")
            or line:find("in function 'xpcall'") or line:find("%(%.%.%.tail calls%.%.%.%)")) then
      lines[#lines + 1] = line
    end
  end
  return #lines > 1 and table.concat(lines, "\n") or nil
end

-- Runs fn; the first failure is kept as { kind = "failure"|"error"|"pending", message, trace }.
local function guarded(fn, outcome)
  local ok, err = xpcall(fn, function(e)
    local kind = "error"
    if type(e) == "table" and getmetatable(e) == failure_mt then kind = "failure" end
    if type(e) == "table" and getmetatable(e) == pending_mt then kind = "pending" end
    return { kind = kind, message = describe_error(e),
             trace = kind == "error" and clean_traceback(debug.traceback("", 2)) or nil }
  end)
  if not ok and outcome.kind == nil then
    outcome.kind, outcome.message, outcome.trace = err.kind, err.message, err.trace
  end
  return ok
end

---------------------------------------------------------------------------------------------
-- The API specs call

local function declaring(kind, level)
  if current_test() then error(kind .. " cannot be used inside a running test", level + 1) end
  if not current then error(kind .. " can only be used in a spec file or a describe block", level + 1) end
end

local function block_function(kind)
  return function(name, fn)
    declaring(kind, 2)
    if type(name) == "function" and fn == nil then name, fn = "", name end
    if type(fn) ~= "function" then
      error(kind .. "('" .. tostring(name) .. "', fn): a function was expected, got " .. type(fn), 2)
    end
    table.insert(current.children, new_block(kind, tostring(name), current, fn, position(2)))
  end
end

local function test_function(kind)
  return function(name, fn)
    declaring(kind, 2)
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
  declaring("pending", 2)
  local where = position(2)
  table.insert(current.children, {
    kind = "test", name = tostring(name), parent = current, file = where.file, line = where.line,
    pending = true,
  })
end

local function hook(list)
  return function(fn)
    if type(fn) ~= "function" then error("a function was expected, got " .. type(fn), 2) end
    declaring(list, 2)
    table.insert(current[list], fn)
  end
end

local function finally(fn)
  local test = current_test()
  if not test then error("finally can only be used inside a test", 2) end
  table.insert(test.finally, fn)
end

local function randomize()
  declaring("randomize", 2)
  current.randomize = true
end

local busted = {
  describe = block_function("describe"), context = block_function("context"),
  insulate = block_function("insulate"), expose = block_function("expose"),
  it = test_function("it"), spec = test_function("spec"), test = test_function("test"),
  pending = pending,
  before_each = hook("before_each"), after_each = hook("after_each"),
  setup = hook("setup"), lazy_setup = hook("setup"), strict_setup = hook("setup"),
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
package.path = "./?.lua;./?/init.lua;./src/?.lua;./src/?/?.lua;./src/?/init.lua;" .. package.path

---------------------------------------------------------------------------------------------
-- Running: a block is an operation that declares its children, then makes an operation of
-- each (chained in order) and waits for them; a test is an operation on the main queue.

local runtime = {}
local options            -- { filter, filter_out, tags, exclude_tags, seed, timeout }
local random             -- the seeded generator of --shuffle
local names = {}         -- operation names in use

local function tags_of(name, into)
  for tag in name:gmatch("#([%w_%-]+)") do into[tag] = true end
  return into
end

local function full_name(node)
  local parts = {}
  local block = node.parent
  while block do
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

local function shuffle(list, next_index)
  for i = #list, 2, -1 do
    local j = next_index(i)
    list[i], list[j] = list[j], list[i]
  end
end

local function selected(test)
  local name = full_name(test)
  local tags = {}
  local block = test.parent
  while block do tags_of(block.name, tags) block = block.parent end
  tags_of(test.name, tags)
  test.full_name, test.tags = name, tags
  local keep = #options.filter == 0
  for _, pattern in ipairs(options.filter) do if name:find(pattern) then keep = true end end
  for _, pattern in ipairs(options.filter_out) do if name:find(pattern) then keep = false end end
  if #options.tags > 0 then
    local any = false
    for _, tag in ipairs(options.tags) do if tags[tag] then any = true end end
    keep = keep and any
  end
  for _, tag in ipairs(options.exclude_tags) do if tags[tag] then keep = false end end
  return keep
end

local function unique(name)
  if names[name] then
    local n = 2
    while names[name .. " (" .. n .. ")"] do n = n + 1 end
    name = name .. " (" .. n .. ")"
  end
  names[name] = true
  return name
end

-- Blocks from the file down to (not including) a test.
local function ancestors(test)
  local list = {}
  local block = test.parent
  while block do
    table.insert(list, 1, block)
    block = block.parent
  end
  return list
end

-- Ends a test's operation as the outcome says: passed, pending (skipped) or failed.
local function conclude(op, outcome)
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

local function run_test(test, op)
  local outcome = {}
  if test.pending then
    outcome.kind, outcome.message = "pending", "pending"
    return conclude(op, outcome)
  end
  local blocks = ancestors(test)
  local snapshot_of_spies = assert:snapshot()
  local co = coroutine.running()
  local state = { finally = {} }
  running[co] = state
  local ok = true
  for _, block in ipairs(blocks) do
    for _, fn in ipairs(block.before_each) do ok = ok and guarded(fn, outcome) end
  end
  if ok then guarded(test.fn, outcome) end
  for i = #blocks, 1, -1 do
    for _, fn in ipairs(blocks[i].after_each) do guarded(fn, outcome) end
  end
  for _, fn in ipairs(state.finally) do guarded(fn, outcome) end
  running[co] = nil
  snapshot_of_spies.revert()
  conclude(op, outcome)
end

local run_block

-- One operation per child, each after the one before (whatever its outcome); a test tagged
-- #parallel waits only for the last untagged one, and the next untagged one for all of them.
local function start_children(block)
  local children = { table.unpack(block.children) }
  if random or block.randomize then shuffle(children, random or generator(os.time())) end
  local made, anchor, since = {}, nil, {}
  for _, child in ipairs(children) do
    if child.kind ~= "test" or selected(child) then
      local after = { anchor }
      local parallel = child.kind == "test" and child.tags.parallel
      if not parallel then
        for _, other in ipairs(since) do after[#after + 1] = other end
      end
      local op
      if child.kind == "test" then
        op = operation {
          name = unique(child.full_name ~= "" and child.full_name or child.file .. ":" .. child.line),
          after = after, when = "finished", timeout = options.timeout,
          run = function(self) return run_test(child, self) end,
        }
        host.case(op, child.full_name, child.file, child.line)
      else
        op = operation {
          name = unique("[" .. child.kind .. "] " .. full_name(child)),
          queue = blocks, after = after, when = "finished",
          run = function(self) return run_block(child, self) end,
        }
      end
      made[#made + 1] = op
      if parallel then since[#since + 1] = op else anchor, since = op, {} end
    end
  end
  return made
end

-- A block that fails outside its tests (its function, setup or teardown) is one error.
local function block_error(block, op, outcome)
  local name = block.kind == "file" and block.name or full_name(block)
  local line = block.line
  if block.kind == "file" then line = tonumber(outcome.message:match(":(%d+):")) or 0 end
  host.case(op, name, block.file, line)
  host.status(op, "error", outcome.message, outcome.trace)
  error(outcome.message, 0)
end

function run_block(block, op)
  local isolated = block.kind ~= "describe" and block.kind ~= "context"
  local before = isolated and snapshot() or nil
  block.before = before
  local outcome = {}
  local previous = current
  current = block
  if block.load_error then
    outcome.kind, outcome.message = "error", block.load_error
  else
    guarded(block.fn, outcome)
  end
  current = previous
  if outcome.kind == nil then
    for _, fn in ipairs(block.setup) do
      if not guarded(fn, outcome) then break end
    end
  end
  if outcome.kind == nil then
    local spies = assert:snapshot()
    local children = start_children(block)
    if #children > 0 then pcall(wait, table.unpack(children)) end
    for _, fn in ipairs(block.teardown) do guarded(fn, outcome) end
    spies.revert()
  end
  if isolated then
    if block.kind == "expose" then
      -- Its changes outlive it: the enclosing isolated block keeps them.
      local after, outer = snapshot(), block.parent
      while outer and not outer.before do outer = outer.parent end
      if outer then
        for _, part in ipairs { "globals", "loaded" } do
          for k, v in next, after[part] do if before[part][k] ~= v then outer.before[part][k] = v end end
        end
      end
    else
      restore(before)
    end
  end
  if outcome.kind then block_error(block, op, outcome) end
end

-- A project's .busted file: its `default` task over `_all`, as busted reads them. `lpath`
-- and `cpath` are put in front of the search paths; the rest is returned as lists.
function runtime.config(path)
  local chunk, err = loadfile(path, "t")
  if not chunk then error(err, 0) end
  local ok, tasks = pcall(chunk)
  if not ok then error(path .. ": " .. tostring(tasks), 0) end
  if type(tasks) ~= "table" then error(path .. ": must return a table of tasks (got " .. type(tasks) .. ")", 0) end
  local merged = {}
  for _, name in ipairs { "_all", "default" } do  -- either may be missing
    local task = tasks[name]
    if type(task) == "table" then for k, v in pairs(task) do merged[k] = v end end
  end
  local function list(value)
    if type(value) == "table" then return value end
    local items = {}
    if value ~= nil then for item in tostring(value):gmatch("[^,]+") do items[#items + 1] = item end end
    return items
  end
  if merged.lpath then package.path = merged.lpath .. ";" .. package.path end
  if merged.cpath then package.cpath = merged.cpath .. ";" .. package.cpath end
  return {
    roots = list(merged.ROOT), pattern = list(merged.pattern), tags = list(merged.tags),
    exclude_tags = list(merged["exclude-tags"]), filter = list(merged.filter),
    filter_out = list(merged["filter-out"]),
  }
end

-- Whether a file name matches one of busted's `pattern`s (Lua patterns).
function runtime.matches(name, patterns)
  for _, pattern in ipairs(patterns) do if name:find(pattern) then return true end end
  return false
end

-- Adds a spec file; a file that does not load becomes one error when its turn comes.
function runtime.collect(path)
  local chunk, err = loadfile(path, "t")
  local block = new_block("file", path, nil, chunk, { file = path, line = 0 })
  block.load_error = not chunk and err or nil
  files[#files + 1] = block
end

-- Makes the operations of the files, one after another.
function runtime.plan(given)
  options = given
  random = options.seed and generator(options.seed) or nil
  local root = { children = files }
  if random then shuffle(root.children, random) end
  local anchor
  for _, file in ipairs(root.children) do
    anchor = operation {
      name = unique("[file] " .. file.name), queue = blocks, after = { anchor }, when = "finished",
      run = function(self) return run_block(file, self) end,
    }
  end
  return #files
end

return runtime
"""#
