-- busted/run.lua: runs declared blocks in busted's order (busted/block.lua, busted/init.lua),
-- each block and each test an operation. Loaded as "=[busted]" after busted/declare.lua.
local host, T = ...
local operation, queue, wait = operation, queue, wait
local running = T.running

-- Blocks wait for their children here, so a block never takes one of the -j slots.
local blocks = queue { name = "test blocks", max_concurrent = -1 }

-- The global state an insulated block changes, as busted/context.lua saves it.
local function snapshot()
  local globals, loaded = {}, {}
  for k in next, _G do globals[k] = rawget(_G, k) end
  for k, v in next, package.loaded do loaded[k] = v end
  return { metatable = debug.getmetatable(_G), globals = globals, loaded = loaded }
end
local function restore(world)
  debug.setmetatable(_G, world.metatable)
  for k in next, _G do rawset(_G, k, world.globals[k]) end
  for k, v in next, world.globals do if rawget(_G, k) == nil then rawset(_G, k, v) end end
  for k in next, package.loaded do package.loaded[k] = world.loaded[k] end
  for k, v in next, world.loaded do if package.loaded[k] == nil then package.loaded[k] = v end end
end

---------------------------------------------------------------------------------------------
-- Errors, as busted's safe() reports them

-- --no-keep-going: after any error or failure nothing more starts (busted's skipAll).
local function failed()
  if not T.options.keep_going then T.skip_all = true end
end

-- An error outside a test (a hook, a block's body, a file).
local function fault(op, ...)
  failed()
  host.extra(op, "error", ...)
end

local pretty_ok, pretty = pcall(require, "pl.pretty")
local format_argument = require("luassert.state").format_argument

-- The first frame that is the spec's: not C, not luassert, not this runtime (as the loader
-- of `element`'s file maps it: a .moon line).
local function origin(level, element)
  while true do
    local info = debug.getinfo(level, "Sl")
    if not info then return nil end
    if info.what ~= "C" and not info.short_src:find("luassert[/\\]") and info.source ~= "=[busted]" then
      local where = T.rewrite_position(element, { file = info.short_src, line = info.currentline })
      return where.file .. ":" .. where.line .. ": "
    end
    level = level + 1
  end
end

-- busted.rewriteMessage: text for any error value (its position mapped by the loader of
-- `element`'s file), with "file:line: " in front.
local function message_of(e, where, element)
  local message
  if type(e) == "string" or (debug.getmetatable(e) or {}).__tostring then
    message = tostring(e)
  elseif e ~= nil then
    message = pretty_ok and pretty.write(e) or format_argument(e)
  else
    message = "Nil error"
  end
  message = T.rewrite_message(element, message)
  if where and not message:match("^[^\n]-:%d+: .*") then message = where .. message end
  return message
end

-- A traceback without the runtime's own frames (they mean nothing to a spec's author).
local function clean_traceback(trace)
  local lines = {}
  for line in trace:gmatch("[^\n]+") do
    if not (line:find("%[busted%]") or line:find("luassert[/\\]") or line:find("%[taskrun%]")
            or line:find("in function 'xpcall'") or line:find("%(%.%.%.tail calls%.%.%.%)")) then
      lines[#lines + 1] = line
    end
  end
  return #lines > 1 and table.concat(lines, "\n") or nil
end

-- Runs fn as `element` (whose environment its globals use): "success", or the status
-- ("failure", "error", "pending"), message and traceback. Only a test's own body can fail;
-- a failed assertion anywhere else is an error.
local function guarded(descriptor, fn, element)
  local kind, message, trace, raw
  local previous = T.enter(element)
  local ok = xpcall(fn, function(e)
    raw = { e }  -- the value raised, as busted's handlers get it (debug.message)
    kind = T.error_kind(e)
    message = message_of(e, origin(2, element), element)
    trace = T.rewrite_traceback(element, clean_traceback(debug.traceback("", 2)))
  end)
  T.leave(previous)
  if ok then return "success" end
  if kind == "failure" and descriptor ~= "it" then kind = "error" end
  return kind, message, trace, raw
end

-- The name busted gives what fails outside a test: the file, a block, or a block's hook.
local function block_name(block)
  return block.kind == "file" and block.name or T.full_name(block)
end
local function hook_name(block, word)
  return (block.kind == "file" or block.kind == "root") and word or T.full_name(block) .. " " .. word
end

local limited  -- guarded, within --timeout (below)

-- The hooks that run in a block's own operation, not a test's: --timeout bounds each.
local block_hooks = { setup = true, teardown = true, lazy_teardown = true }

-- Runs a block's hooks of one kind in the order they were declared, teardowns and after_each
-- too (busted/block.lua's dexecAll); each that fails is an error of its own. Returns whether
-- all succeeded.
local function run_hooks(block, list, op)
  local ok = true
  for _, hook in ipairs(block[list]) do
    local status, message, trace, raw
    if block_hooks[list] then
      status, message, trace, raw =
        limited(hook.word .. " hook", hook.word, hook.fn, block.hooks_context, op, hook.where)
    else
      status, message, trace, raw = guarded(hook.word, hook.fn, block.hooks_context)
    end
    if status ~= "success" and status ~= "pending" then
      fault(op, hook_name(block, hook.word), hook.where.file, hook.where.line, message, trace)
      T.publish_hook_error(block, hook, message, trace, raw, list)
      ok = false
    end
  end
  return ok
end

---------------------------------------------------------------------------------------------
-- Tests

local function ancestors(test)
  local list = { T.root }
  local block = test.parent
  while block do
    table.insert(list, 2, block)
    block = block.parent
  end
  return list
end

-- Ends a test's operation as its status says: passed, pending (skipped) or failed.
local function conclude(op, status, message, trace, test)
  if status == "success" then
    host.status(op, "passed")
    if T.log_success then
      local ok, err = T.log_success:write(T.full_name(test) .. "\n")
      if ok then ok, err = T.log_success:flush() end
      if not ok then host.log_failed(tostring(err)) end
    end
  elseif status == "pending" then
    host.status(op, "pending", message)
    host.skip(op, message or "pending")
    if T.options.suppress_pending then host.drop(op) end
  else
    failed()
    host.status(op, status, message, trace)
    error(message, 0)
  end
end

-- busted's `it`: lazy setups once, before_each from the outside in (a level that fails stops
-- the descent and the test does not count), the body, its finally, after_each back out.
-- Spies and stubs are not reverted between tests: busted 2.1.1 does not either (a spec
-- reverts them itself, with assert:snapshot() or spy:revert()).
local function run_test(test, op)
  if T.options.list then
    if test.pending and T.options.suppress_pending then return host.drop(op) end  -- nor listed
    return host.status(op, "passed")
  end
  if T.skip_all then return host.drop(op) end
  if test.pending then  -- busted gives it no message
    T.publish({ "test", "start" }, test, test.parent)
    T.publish({ "test", "end" }, test, test.parent, "pending")
    return conclude(op, "pending")
  end
  local chain = ancestors(test)
  local state = {}
  test.env = T.test_env(state)  -- its finally and pending, and what it may not call
  for _, block in ipairs(chain) do
    if block.lazy_ok == nil then block.lazy_ok = run_hooks(block, "lazy_setup", op) end
    if not block.lazy_ok then return host.drop(op) end
  end
  local co = coroutine.running()
  local ran, reached = true, #chain
  for i, block in ipairs(chain) do
    if not run_hooks(block, "before_each", op) then ran, reached = false, i break end
  end
  local status, message, trace = "success", nil, nil
  if ran then
    T.publish({ "test", "start" }, test, test.parent)
    running[co] = state
    local raw
    status, message, trace, raw = guarded("it", test.fn, test)
    T.publish_outcome(status, test, test.parent, message, trace, raw)
    if state.finally then
      test.env.pending = T.reject("pending")  -- busted rejects pending() in a finally
      local s, m, t, r = guarded("finally", state.finally, test)
      T.publish_outcome(s, test, test.parent, m, t, r)
      if s ~= "success" and (status == "success" or status == "pending") then status, message, trace = s, m, t end
    end
    running[co] = nil
    T.publish({ "test", "end" }, test, test.parent, status)
  end
  for i = reached, 1, -1 do run_hooks(chain[i], "after_each", op) end
  if not ran then return host.drop(op) end
  conclude(op, status, message, trace, test)
end

---------------------------------------------------------------------------------------------
-- Blocks

local names = {}  -- operation names in use

-- A test's name as an operation may take it: the control characters operation{} refuses in
-- names (they would reach the terminal) written as Lua escapes ("a\tb" becomes "a\9b").
local function printable(name)
  return (name:gsub("[%c]", function(c) return "\\" .. c:byte() end)
    :gsub("\xC2[\x80-\x9F]", function(c) return "\\" .. c:byte(2) end)
    :gsub("\xE2\x80[\xA8-\xAE]", function(c) return string.format("\\u{%X}", 0x2000 + c:byte(3) - 0x80) end)
    :gsub("\xE2\x81[\xA6-\xA9]", function(c) return string.format("\\u{%X}", 0x2040 + c:byte(3) - 0x80) end))
end

local function unique(name)
  name = printable(name)
  if names[name] then
    local n = 2
    while names[name .. " (" .. n .. ")"] do n = n + 1 end
    name = name .. " (" .. n .. ")"
  end
  names[name] = true
  return name
end

-- busted's order (busted/utils.lua, block.lua, execute.lua): a shuffle seeds Lua's own
-- generator and draws from the end, so the same seed gives busted's order; sorting is by
-- name, the unnamed first, and wins over shuffling.
local function shuffle(list, seed)
  math.randomseed(seed)
  for n = #list, 2, -1 do
    local k = math.random(n)
    list[n], list[k] = list[k], list[n]
  end
end
local function sort(list)
  table.sort(list, function(a, b)
    if a.name and b.name then return a.name < b.name end
    return b.name ~= nil
  end)
end

-- A block's children in the order they run: all it declared (hooks count in the shuffle,
-- as they are busted's children too), sorted or shuffled, then the hooks left out. As in
-- busted, a shuffled block keeps its seed (`randomseed`, which the entries of its tests'
-- failures carry) and busted.children gives the order they run in.
local function shuffled_seed(block)
  local choice = block.randomize or { on = T.options.shuffle_tests }
  if T.options.sort_tests or not choice.on then return nil end
  return choice.seed or T.seed
end

local function ordered(block)
  local list = { table.unpack(block.declared) }
  block.randomseed = shuffled_seed(block)
  if T.options.sort_tests then
    sort(list)
  elseif block.randomseed then
    shuffle(list, block.randomseed)
  end
  block.declared = list
  local children = {}
  for _, entry in ipairs(list) do
    if not entry.hook then children[#children + 1] = entry end
  end
  return children
end

local run_block

-- One operation per child, each after the one before (whatever its outcome); a test tagged
-- #parallel waits only for the last untagged one, and the next untagged one for all of them.
local function start_children(block)
  local children = ordered(block)
  local made, anchor, since = {}, nil, {}
  for _, child in ipairs(children) do
    local after = { anchor }
    local full = T.full_name(child)
    local parallel = child.kind == "test" and full:find("#parallel") ~= nil
    if not parallel then
      for _, other in ipairs(since) do after[#after + 1] = other end
    end
    local op
    if child.kind == "test" then
      op = operation {
        name = unique(full ~= "" and full or child.file .. ":" .. child.line),
        after = after, when = "finished", timeout = T.options.timeout,
        run = function(self) return run_test(child, self) end,
        cleanup = T.test_stopped and function(_, why, message) T.test_stopped(child, why, message) end,
      }
      host.case(op, full, child.file, child.line)
    else
      op = operation {
        name = unique("[" .. child.kind .. "] " .. full), queue = blocks, after = after, when = "finished",
        run = function(self) return run_block(child, self) end,
      }
      host.block(op, full, child.file, child.line)
    end
    made[#made + 1] = op
    if parallel then since[#since + 1] = op else anchor, since = op, {} end
  end
  return made
end

-- guarded(descriptor, fn, element), and with --timeout as an operation of its own (of `op`,
-- the block's), so the limit bounds what runs in a block's operation (its body, its setup
-- and teardown hooks) and not the tests it waits for. `what` names it in the message.
function limited(what, descriptor, fn, element, op, where)
  if not T.options.timeout then return guarded(descriptor, fn, element) end
  local status, message, trace, raw
  local body = operation {
    name = unique("[" .. what .. "] " .. where.file .. ":" .. where.line), queue = blocks,
    timeout = T.options.timeout,
    run = function() status, message, trace, raw = guarded(descriptor, fn, element) end,
  }
  host.body(body, op)
  local ok, err = pcall(wait, body)
  if not ok and status == nil then
    status = "error"
    message = where.file .. ":" .. where.line .. ": the " .. what .. " "
      .. (tostring(err):match("failed: (.*)$") or tostring(err))
  end
  return status, message, trace, raw
end

-- A block's function declares its children (within --timeout).
local function run_body(block, op)
  if block.load_error then return "error", block.load_error end
  local previous = T.current
  T.current = block
  local status, message, trace, raw = limited(block.kind .. " body", block.kind, block.fn, block, op, block)
  T.current = previous
  return status, message, trace, raw
end

-- An expose block's changes outlive it: as busted/context.lua does, the nearest enclosing
-- insulated block will restore the world as it is when the expose block ends.
local function expose(block)
  local outer = block.parent
  while outer and not outer.world do outer = outer.parent end
  if outer then outer.world = snapshot() end
end

function run_block(block, op)
  if T.skip_all then return host.declared(op) end
  for _, list in ipairs { "children", "declared", "before_each", "after_each", "setup", "teardown", "lazy_setup", "lazy_teardown" } do
    block[list] = {}
  end
  block.lazy_ok, block.env = nil, {}
  -- hooks see and set their block's names, and may not declare (busted/block.lua's rejectAll)
  block.hooks_context = { parent = block, unwrap = 1, env = T.rejections }
  local insulated = block.kind == "insulate" or (block.kind == "file" and T.options.auto_insulate)
  local world = insulated and snapshot() or nil
  block.world = world
  local channel = block.kind == "file" and "file" or "describe"
  -- busted publishes a file's start and end with the file alone, a describe's with its block
  local function publish_edge(edge)
    if channel == "file" then return T.publish({ channel, edge }, block) end
    return T.publish({ channel, edge }, block, block.parent or T.root)
  end
  publish_edge("start")
  local status, message, trace, raw = run_body(block, op)
  host.declared(op)
  if status ~= "success" then
    local line = block.line
    if block.kind == "file" then line = tonumber(tostring(message):match(":(%d+):")) or 0 end
    -- busted names a file that does not load by its path, and one whose body raised by its
    -- path under the suite ("suite spec/x_spec.lua": the suite is the file's parent)
    local name = block_name(block)
    if block.kind == "file" and not block.load_error then name = "suite " .. name end
    fault(op, name, block.file, line, message, trace)
    if not block.load_error then T.publish_outcome("error", block, block.parent or T.root, message, trace, raw) end
  elseif not T.options.list then
    block.randomseed = shuffled_seed(block)  -- busted shuffles before the setups run
    if run_hooks(block, "setup", op) then
      local children = start_children(block)
      if #children > 0 then pcall(wait, table.unpack(children)) end
    end
    if block.lazy_ok ~= nil then run_hooks(block, "lazy_teardown", op) end
    run_hooks(block, "teardown", op)
  else
    local children = start_children(block)
    if #children > 0 then pcall(wait, table.unpack(children)) end
  end
  publish_edge("end")
  if block.kind == "expose" then expose(block) elseif insulated then restore(block.world) end
end

-- One round of the suite (busted/execute.lua): the suite's setups, the files one after
-- another, its teardowns.
local function run_suite(files, op, round, rounds, seed)
  if T.skip_all then return end
  T.seed = seed
  local root = T.root
  root.lazy_ok = nil
  root.hooks_context = root.hooks_context or { parent = root, unwrap = 1, env = T.rejections }
  root.files = files  -- busted.children(suite)
  -- busted's suite keeps the seed its files were shuffled with (a file's error carries it)
  root.randomseed = T.options.shuffle_files and not T.options.sort_files and seed or nil
  if round > 1 then T.publish({ "suite", "reset" }, root, round, rounds) end
  T.publish({ "suite", "start" }, root, round, rounds, T.options.shuffle_tests and seed or nil)
  if T.options.list or run_hooks(root, "setup", op) then
    local anchor
    for _, file in ipairs(files) do
      anchor = operation {
        name = unique("[file] " .. file.name), queue = blocks, after = { anchor }, when = "finished",
        run = function(self) return run_block(file, self) end,
      }
      -- named as busted names an error of the file's body: under the suite
      host.block(anchor, "suite " .. file.name, file.name, 0)
    end
    if anchor then pcall(wait, anchor) end
  end
  if not T.options.list then
    if root.lazy_ok ~= nil then run_hooks(root, "lazy_teardown", op) end
    run_hooks(root, "teardown", op)
  end
  T.publish({ "suite", "end" }, root, round, rounds)
end

-- Makes the operations of the suite, `rounds` times (--repeat), one after another.
function T.plan(files, rounds)
  local anchor
  for round = 1, rounds do
    local blocks_of_round = {}
    for i, file in ipairs(files) do
      blocks_of_round[i] = T.new_block("file", file.name, nil, file.fn, { file = file.name, line = 0 })
      blocks_of_round[i].load_error = file.load_error
    end
    -- busted draws a new seed for each round unless --seed gives one
    local seed = T.options.seed
    if round > 1 and not T.options.seed_given then seed = math.random(0, 0xFFFFFFFF) end
    local listed = { table.unpack(T.root.declared) }  -- a helper's hooks, then the files
    for _, block in ipairs(blocks_of_round) do listed[#listed + 1] = block end
    if T.options.sort_files then
      sort(listed)
    elseif T.options.shuffle_files then
      shuffle(listed, seed)
    end
    blocks_of_round = {}
    for _, entry in ipairs(listed) do
      if not entry.hook then blocks_of_round[#blocks_of_round + 1] = entry end
    end
    anchor = operation {
      name = unique("[suite]"), queue = blocks, after = { anchor }, when = "finished",
      run = function(self) return run_suite(blocks_of_round, self, round, rounds, seed) end,
    }
  end
  return #files * rounds
end
