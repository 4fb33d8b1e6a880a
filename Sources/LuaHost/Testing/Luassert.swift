// Luassert: the Lua source of luassert, say, spy, stub, mock and match for `taskrun test`.

/// Loaded once per test run with chunk name "=[luassert]"; returns the module table.
let luassertSource = #"""
local M = {}

---------------------------------------------------------------------------------------------
-- say: message templates by key, in namespaces (languages) with a fallback
local registry = { en = {} }
local namespace, fallback = "en", "en"
local say = { _registry = registry }
function say:set_namespace(name)
  namespace = name
  registry[name] = registry[name] or {}
end
function say:set_fallback(name)
  fallback = name
  registry[name] = registry[name] or {}
end
function say:set(key, value) registry[namespace][key] = value end
setmetatable(say, {
  __call = function(_, key, vars)
    if vars ~= nil and type(vars) ~= "table" then
      error(("expected parameter table to be a table, got '%s'"):format(type(vars)), 2)
    end
    vars = vars or {}
    local text = registry[namespace][key]
    if text == nil then text = registry[fallback][key] end
    if text == nil then return nil end
    text = tostring(text)
    local count = math.max(vars.n or 0, #vars)
    if count == 0 then return text end
    local strings = {}
    for i = 1, count do strings[i] = tostring(vars[i]) end
    return text:format(table.unpack(strings, 1, count))
  end,
  __index = function(_, name) return registry[name] end,
})
M.say = say

---------------------------------------------------------------------------------------------
-- Formatting values for failure messages, as luassert shows them: "(number) 2"
local parameters = { TableFormatLevel = 3, TableErrorHighlightMark = "*", TableErrorHighlightColor = "none" }
local formatters = {}
local matcher_mt = {}

local function keystring(k)
  if type(k) == "string" then return k end
  return tostring(k)
end

local function sortedkeys(t)
  local keys = {}
  for k in next, t do keys[#keys + 1] = k end
  table.sort(keys, function(a, b)
    local ta, tb = type(a), type(b)
    if ta ~= tb then return ta < tb end
    if ta == "number" or ta == "string" then return a < b end
    return tostring(a) < tostring(b)
  end)
  return keys
end

local function tablestring(t, indent, level, seen)
  local limit = parameters.TableFormatLevel
  if limit >= 0 and level > limit then return "{ ... more }" end
  if seen[t] then return "{ ... recursive }" end
  seen[t] = true
  local keys = sortedkeys(t)
  if #keys == 0 then seen[t] = nil return "{ }" end
  local lines = {}
  for _, k in ipairs(keys) do
    local v = rawget(t, k)
    local shown
    if type(v) == "table" and getmetatable(v) ~= matcher_mt then
      shown = tablestring(v, indent .. "  ", level + 1, seen)
    elseif type(v) == "string" then
      shown = string.format("%q", v)
    else
      shown = tostring(v)
    end
    lines[#lines + 1] = indent .. "  [" .. keystring(k) .. "] = " .. shown
  end
  seen[t] = nil
  return "{\n" .. table.concat(lines, "\n") .. " }"
end

local function format(v)
  for i = #formatters, 1, -1 do
    local shown = formatters[i](v)
    if shown ~= nil then return shown end
  end
  local kind = type(v)
  if kind == "nil" then return "(nil)" end
  if kind == "string" then return "(string) '" .. v .. "'" end
  if kind == "table" then
    if getmetatable(v) == matcher_mt then return "(matcher) " .. v.name end
    local mt = getmetatable(v)
    if mt and mt.__tostring then return "(" .. tostring(v) .. ")" end
    return "(" .. tostring(v) .. ") " .. tablestring(v, "", 1, {})
  end
  if kind == "number" then
    if math.type(v) == "float" and v == math.floor(v) and v > -1e15 and v < 1e15 then
      return "(number) " .. string.format("%.1f", v)
    end
    return "(number) " .. tostring(v)
  end
  return "(" .. kind .. ") " .. tostring(v)
end
M.format = format

---------------------------------------------------------------------------------------------
-- Failures: a table error (busted tells failures from errors by it) whose text has file:line
local failure_mt = { __tostring = function(e) return e.message end }
M.failure_mt = failure_mt

-- The first frame outside this runtime: where the user's assertion is.
local own = debug.getinfo(1, "S").source
local function caller()
  local level = 2
  while true do
    local info = debug.getinfo(level, "Sl")
    if not info then return nil end
    if info.source ~= own and info.what ~= "C" then
      return info.short_src .. ":" .. (info.currentline or 0)
    end
    level = level + 1
  end
end

local function fail(message)
  local where = caller()
  error(setmetatable({ message = (where and where .. ": " or "") .. message }, failure_mt), 0)
end
M.fail = fail

---------------------------------------------------------------------------------------------
-- Deep comparison, with matchers standing for values
local function is_matcher(v) return type(v) == "table" and getmetatable(v) == matcher_mt end

local function deepcompare(a, b, seen)
  if is_matcher(b) then return b.test(a) end
  if is_matcher(a) then return a.test(b) end
  if a == b then return true end
  if type(a) ~= "table" or type(b) ~= "table" then return false end
  local mt = getmetatable(a)
  if mt and mt.__eq then return a == b end
  seen = seen or {}
  if seen[a] == b then return true end
  seen[a] = b
  for k, v in next, a do
    if not deepcompare(v, rawget(b, k), seen) then return false end
  end
  for k in next, b do
    if rawget(a, k) == nil then return false end
  end
  return true
end
M.deepcompare = deepcompare

local function pack(...) return { n = select("#", ...), ... } end

local function deepcopy(v, seen)
  if type(v) ~= "table" or is_matcher(v) then return v end
  seen = seen or {}
  if seen[v] then return seen[v] end
  local copy = {}
  seen[v] = copy
  for k, x in next, v do copy[k] = deepcopy(x, seen) end
  return setmetatable(copy, getmetatable(v))
end

---------------------------------------------------------------------------------------------
-- Spies, stubs and mocks
local spy_mt = {}
local spies_made = {}  -- every spy, so a snapshot can revert the ones made after it

local spy = {}
M.spy = spy

local function is_spy(v) return type(v) == "table" and getmetatable(v) == spy_mt end
spy.is_spy = is_spy

function spy_mt.__call(self, ...)
  local arguments = pack(...)
  local call = { vals = deepcopy(arguments), refs = arguments }
  self.calls[#self.calls + 1] = call
  local results = pack(self.callback(...))
  self.returnvals[#self.returnvals + 1] = results
  return table.unpack(results, 1, results.n)
end

local spy_methods = {}
spy_mt.__index = spy_methods

function spy_methods:revert()
  if self.target_table ~= nil and not self.reverted then
    rawset(self.target_table, self.target_key, self.original)
    self.reverted = true
  end
  return self
end
function spy_methods:clear()
  self.calls, self.returnvals = {}, {}
  return self
end
function spy_methods:callcount() return #self.calls end
function spy_methods:called(n)
  if n == nil then return #self.calls > 0 end
  return #self.calls == n
end
function spy_methods:called_with(...)
  local expected = pack(...)
  for _, call in ipairs(self.calls) do
    if deepcompare(call.vals, expected) or deepcompare(call.refs, expected) then return true end
  end
  return false
end
function spy_methods:returned_with(...)
  local expected = pack(...)
  for _, values in ipairs(self.returnvals) do
    if deepcompare(values, expected) then return true end
  end
  return false
end
-- Stub behaviour: what a call gives back. Called as s:returns(...) or s.returns(...).
local function behaviours(s)
  local function values(first, ...)
    if rawequal(first, s) then return pack(...) end
    return pack(first, ...)
  end
  function s.returns(...)
    local v = values(...)
    s.callback = function() return table.unpack(v, 1, v.n) end
    return s
  end
  function s.invokes(...)
    local v = values(...)
    s.callback = v[1]
    return s
  end
  function s.on_call_with(...)
    local expected = values(...)
    local previous = s.callback
    local answer = {}
    function answer.returns(...)
      local v = pack(...)
      if rawequal(v[1], answer) then v = pack(select(2, ...)) end
      s.callback = function(...)
        if deepcompare(pack(...), expected) then return table.unpack(v, 1, v.n) end
        return previous(...)
      end
      return s
    end
    function answer.invokes(...)
      local fn = ...
      if rawequal(fn, answer) then fn = select(2, ...) end
      s.callback = function(...)
        if deepcompare(pack(...), expected) then return fn(...) end
        return previous(...)
      end
      return s
    end
    return answer
  end
end

function spy.new(callback)
  if callback ~= nil and not (type(callback) == "function" or (getmetatable(callback) or {}).__call) then
    error("cannot spy on a " .. type(callback) .. " (a function or callable is needed)", 2)
  end
  local s = setmetatable({ calls = {}, returnvals = {}, callback = callback or function() end }, spy_mt)
  behaviours(s)
  spies_made[#spies_made + 1] = s
  return s
end

-- Puts spy `s` in place of target[key], remembering the original for revert.
local function replace(target, key, s)
  s.target_table, s.target_key, s.original = target, key, target[key]
  rawset(target, key, s)
  return s
end

function spy.on(target, key) return replace(target, key, spy.new(target[key])) end

setmetatable(spy, { __call = function(_, callback) return spy.new(callback) end })

local stub = {}
M.stub = stub
function stub.new(target, key, ...)
  local values = pack(...)
  local callback = function() return table.unpack(values, 1, values.n) end
  if target == nil then return spy.new(callback) end
  return replace(target, key, spy.new(callback))
end
stub.is_stub = is_spy
setmetatable(stub, { __call = function(_, ...) return stub.new(...) end })

local mock = {}
M.mock = mock
local function mock_apply(object, dostub, seen)
  seen = seen or {}
  if seen[object] then return object end
  seen[object] = true
  for k, v in pairs(object) do
    if type(v) == "function" then
      if dostub then stub.new(object, k) else spy.on(object, k) end
    elseif type(v) == "table" and not is_spy(v) then
      mock_apply(v, dostub, seen)
    end
  end
  return object
end
-- Calls `action` on every spy in a (mocked) table, nested tables too.
local function each_spy(object, action, seen)
  seen = seen or {}
  if seen[object] then return end
  seen[object] = true
  for _, v in pairs(object) do
    if is_spy(v) then action(v) elseif type(v) == "table" then each_spy(v, action, seen) end
  end
end
function mock.revert(object) each_spy(object, function(s) s:revert() end) end
function mock.clear(object) each_spy(object, function(s) s:clear() end) end
setmetatable(mock, { __call = function(_, object, dostub) return mock_apply(object, dostub) end })

---------------------------------------------------------------------------------------------
-- Matchers: match._, match.is_string(), match.is_same(x), match.is_not_nil(), …
local match = {}
M.match = match
local matchers = {}

local function make_matcher(name, test) return setmetatable({ name = name, test = test }, matcher_mt) end
match.is_matcher = is_matcher
match._ = make_matcher("_", function() return true end)

local function type_matcher(kind)
  return function() return function(v) return type(v) == kind end end
end
for _, kind in ipairs { "string", "number", "table", "function", "boolean", "nil", "userdata", "thread" } do
  matchers[kind] = type_matcher(kind)
end
matchers["true"] = function() return function(v) return v == true end end
matchers["false"] = function() return function(v) return v == false end end
matchers.truthy = function() return function(v) return not not v end end
matchers.falsy = function() return function(v) return not v end end
matchers.same = function(expected) return function(v) return deepcompare(v, expected) end end
matchers.equal = function(expected) return function(v) return v == expected end end
matchers.equals = matchers.equal
matchers.ref = function(expected) return function(v) return rawequal(v, expected) end end
matchers.near = function(expected, tolerance)
  return function(v) return type(v) == "number" and math.abs(v - expected) <= tolerance end
end
matchers.matches = function(pattern, init, plain)
  return function(v) return type(v) == "string" and v:find(pattern, init, plain) ~= nil end
end
matchers.match = matchers.matches
matchers.all_of = function(...)
  local list = pack(...)
  return function(v)
    for i = 1, list.n do if not list[i].test(v) then return false end end
    return true
  end
end
matchers.any_of = function(...)
  local list = pack(...)
  return function(v)
    for i = 1, list.n do if list[i].test(v) then return true end end
    return false
  end
end
matchers.none_of = function(...)
  local any = matchers.any_of(...)
  return function(v) return not any(v) end
end

-- Words that chain without meaning anything (`is`, `are`, `was`, …) or negate (`not`, `no`).
local words = {
  is = true, are = true, was = true, has = true, does = true, be = true, the = true, a = true,
  an = true, to = true, at = true, ["with"] = true, by = true, of = true, ["and"] = true,
  ["not"] = "negate", no = "negate",
}

-- Reads a key such as `is_not_equal`: words joined by '_', each the longest run that `take`
-- accepts (so `has_no_errors` and `error_matches` both read). Returns the first unknown word.
local function read_words(key, take)
  local tokens = {}
  for token in key:lower():gmatch("[^_]+") do tokens[#tokens + 1] = token end
  local i = 1
  while i <= #tokens do
    local found
    for j = #tokens, i, -1 do
      if take(table.concat(tokens, "_", i, j)) then found = j break end
    end
    if not found then return tokens[i] end
    i = found + 1
  end
  return nil
end

setmetatable(match, { __index = function(_, key)
  local negate, name = false, nil
  local unknown = read_words(key, function(word)
    if matchers[word] then name = word
    elseif words[word] == "negate" then negate = not negate
    elseif not words[word] then return false end
    return true
  end)
  if unknown or not name then return nil end
  return function(...)
    local test = matchers[name](...)
    if negate then return make_matcher("not " .. name, function(v) return not test(v) end) end
    return make_matcher(name, test)
  end
end })

---------------------------------------------------------------------------------------------
-- Assertions
local assertions = {}  -- name -> { fn, positive, negative }
local modifiers = {}   -- name -> function(state, arguments)

local function argument_list(arguments, from)
  local shown = {}
  for i = from or 1, arguments.n do shown[#shown + 1] = format(arguments[i]) end
  return shown
end

-- Built-in assertions: fn(state, arguments) -> ok; message(arguments, negated) -> text;
-- `arity` arguments are values, the next one (if a string) is the user's own message.
local function builtin(names, arity, fn, message)
  local entry = { fn = fn, arity = arity, message = message }
  for name in names:gmatch("%S+") do assertions[name] = entry end
end

local function passed_expected(what)
  return function(a, negated)
    return "Expected objects to " .. (negated and "not " or "") .. what .. ".\nPassed in:\n"
      .. format(a[2]) .. "\nExpected:\n" .. format(a[1])
  end
end

builtin("same", 2, function(_, a) return deepcompare(a[2], a[1]) end, passed_expected("be the same"))
builtin("equals equal", 2, function(_, a)
  if is_matcher(a[1]) then return a[1].test(a[2]) end
  return a[1] == a[2]
end, passed_expected("be equal"))
builtin("near", 3, function(_, a)
  if type(a[1]) ~= "number" or type(a[2]) ~= "number" or type(a[3]) ~= "number" then
    error("near: expected three numbers (expected, actual, tolerance)", 0)
  end
  return math.abs(a[2] - a[1]) <= a[3]
end, function(a, negated)
  return "Expected values to " .. (negated and "not " or "") .. "be near.\nPassed in:\n" .. format(a[2])
    .. "\nExpected:\n" .. format(a[1]) .. " +/- " .. format(a[3])
end)
builtin("unique", 2, function(_, a)
  local list, deep = a[1], a[2]
  if type(list) ~= "table" then return false end
  local seen = {}
  for _, v in pairs(list) do
    for _, w in ipairs(seen) do
      if (deep and deepcompare(v, w)) or (not deep and v == w) then return false end
    end
    seen[#seen + 1] = v
  end
  return true
end, function(a, negated)
  return "Expected object to " .. (negated and "not " or "") .. "be unique:\n" .. format(a[1])
end)
builtin("matches match", 4, function(_, a)
  local pattern, actual = a[1], a[2]
  if type(actual) == "number" then actual = tostring(actual) end
  if type(actual) ~= "string" then return false end
  return actual:find(pattern, a[3], a[4]) ~= nil
end, function(a, negated)
  return "Expected strings to " .. (negated and "not " or "") .. "match.\nPassed in:\n" .. format(a[2])
    .. "\nExpected:\n" .. format(a[1])
end)

local function strip_position(e)
  if type(e) == "string" then return (e:gsub("^.-:%d+: ", "", 1)) end
  if getmetatable(e) == failure_mt then return (e.message:gsub("^.-:%d+: ", "", 1)) end
  return e
end

builtin("error errors", 2, function(state, a)
  local fn, expected = a[1], a[2]
  if type(fn) ~= "function" and not (getmetatable(fn) or {}).__call then
    error("has_error: a function was expected, got " .. format(fn), 0)
  end
  local ok, err = pcall(fn)
  state.actual_error = err
  if ok then return false end
  if a.n < 2 then return true end
  return deepcompare(strip_position(err), expected)
end, function(a, negated, state)
  if a.n < 2 or state.actual_error == nil then
    return negated and "Expected no error, but caught:\n" .. format(strip_position(state.actual_error))
      or "Expected a different error.\nCaught:\n(no error)\nExpected:\n" .. (a.n < 2 and "(any error)" or format(a[2]))
  end
  return "Expected " .. (negated and "a different" or "a") .. " error.\nCaught:\n"
    .. format(strip_position(state.actual_error)) .. "\nExpected:\n" .. format(a[2])
end)
builtin("error_matches error_match matches_error match_error", 4, function(state, a)
  local ok, err = pcall(a[1])
  state.actual_error = err
  if ok then return false end
  err = strip_position(err)
  if type(err) ~= "string" then err = tostring(err) end
  return err:find(a[2], a[3], a[4]) ~= nil
end, function(a, negated, state)
  return "Expected " .. (negated and "a different" or "a matching") .. " error.\nCaught:\n"
    .. format(strip_position(state.actual_error)) .. "\nExpected:\n" .. format(a[2])
end)

local function value_check(names, test, what)
  builtin(names, 1, function(_, a) return test(a[1]) end, function(a, negated)
    return "Expected value " .. (negated and "not " or "") .. what .. ", but got:\n" .. format(a[1])
  end)
end
value_check("truthy", function(v) return not not v end, "to be truthy")
value_check("falsy", function(v) return not v end, "to be falsy")
value_check("true", function(v) return v == true end, "to be true")
value_check("false", function(v) return v == false end, "to be false")
for _, kind in ipairs { "boolean", "number", "string", "table", "nil", "userdata", "function", "thread" } do
  value_check(kind, function(v) return type(v) == kind end, "of type " .. kind)
end
builtin("returned_arguments", 2, function(_, a)
  local results = pack(a[2]())
  return results.n == a[1]
end, function(a, negated)
  return "Expected " .. (negated and "not " or "") .. "to be called with " .. format(a[1]) .. " argument(s)"
end)

-- Spy assertions: the spy is the payload of assert.spy(s) / assert.stub(s), or the first argument.
local function spy_of(state, a)
  if state.payload ~= nil then return state.payload, 1 end
  return a[1], 2
end
local function spy_assertion(names, arity, test, describe)
  builtin(names, arity, function(state, a)
    local s, from = spy_of(state, a)
    if not is_spy(s) then error("expected a spy or stub, got " .. format(s), 0) end
    state.spied = s
    return test(s, a, from)
  end, function(a, negated, state)
    return "Expected spy " .. (negated and "not " or "") .. describe(a, state) .. ".\nCalls:\n" .. (function()
      local lines = {}
      for i, call in ipairs(state.spied and state.spied.calls or {}) do
        lines[#lines + 1] = "  " .. i .. ": (" .. table.concat(argument_list(call.vals), ", ") .. ")"
      end
      return #lines == 0 and "  (none)" or table.concat(lines, "\n")
    end)()
  end)
end
local function count_of(a, from) return a[from] end
spy_assertion("called", 2, function(s, a, from)
  local n = count_of(a, from)
  if n == nil then return #s.calls > 0 end
  return #s.calls == n
end, function(a, state)
  local n = state.payload ~= nil and a[1] or a[2]
  return "to be called" .. (n and " " .. tostring(n) .. " time(s)" or "") .. ", but it was called "
    .. #state.spied.calls .. " time(s)"
end)
local function comparison(name, op, words)
  spy_assertion(name, 2, function(s, a, from) return op(#s.calls, count_of(a, from) or 0) end, function(a, state)
    local n = state.payload ~= nil and a[1] or a[2]
    return "to be called " .. words .. " " .. tostring(n) .. " time(s), but it was called "
      .. #state.spied.calls .. " time(s)"
  end)
end
comparison("called_at_least", function(c, n) return c >= n end, "at least")
comparison("called_at_most", function(c, n) return c <= n end, "at most")
comparison("called_more_than", function(c, n) return c > n end, "more than")
comparison("called_less_than", function(c, n) return c < n end, "less than")
spy_assertion("called_with", 99, function(s, a, from)
  return s:called_with(table.unpack(a, from, a.n))
end, function(a, state)
  local from = state.payload ~= nil and 1 or 2
  return "to be called with (" .. table.concat(argument_list(a, from), ", ") .. ")"
end)
spy_assertion("returned_with", 99, function(s, a, from)
  return s:returned_with(table.unpack(a, from, a.n))
end, function(a, state)
  local from = state.payload ~= nil and 1 or 2
  return "to return (" .. table.concat(argument_list(a, from), ", ") .. ")"
end)

local function payload(state, a) state.payload = a[1] end
modifiers.spy = payload
modifiers.stub = payload
modifiers.message = function(state, a) state.message = a[1] end

local state_mt = {}
local function new_state(from)
  local state = { positive = true }
  if from then for k, v in pairs(from) do state[k] = v end end
  return setmetatable(state, state_mt)
end

-- Fields of a state itself (read with rawget semantics: never words of a chain)
local reserved = {
  positive = true, assertion = true, pending_modifier = true, payload = true, message = true,
  failure_message = true, actual_error = true, spied = true,
}

state_mt.__index = function(self, key)
  if type(key) ~= "string" or reserved[key] then return nil end
  local state = new_state(self)
  local unknown = read_words(key, function(word)
    if assertions[word] then state.assertion, state.pending_modifier = word, nil
    elseif modifiers[word] then state.pending_modifier = word
    elseif words[word] == "negate" then state.positive = not state.positive
    elseif not words[word] then return false end
    return true
  end)
  if unknown then
    error("luassert: unknown modifier/assertion: '" .. unknown .. "'"
      .. (key:find("_") and " (in '" .. key .. "')" or ""), 2)
  end
  return state
end

local function run_assertion(state, ...)
  local arguments = pack(...)
  local entry = assertions[state.assertion]
  local ok = entry.fn(state, arguments)
  if (not not ok) == state.positive then return ... end
  local custom = state.message
  if custom == nil and entry.arity and arguments.n > entry.arity and type(arguments[entry.arity + 1]) == "string" then
    custom = arguments[entry.arity + 1]
  end
  local text
  if custom ~= nil then
    text = tostring(custom)
  elseif entry.message then
    text = entry.message(arguments, not state.positive, state)
  else
    -- Registered with say keys: the arguments are formatted, then filled in
    local key = state.positive and entry.positive or entry.negative
    local shown = { n = arguments.n }
    for i = 1, arguments.n do shown[i] = format(arguments[i]) end
    text = state.failure_message or (key and say(key, shown)) or ("assertion '" .. state.assertion .. "' failed")
  end
  fail(text)
end

state_mt.__call = function(self, ...)
  if self.pending_modifier then
    local modifier = self.pending_modifier
    local state = new_state(self)
    state.pending_modifier = nil
    modifiers[modifier](state, pack(...))
    return state
  end
  if self.assertion then return run_assertion(self, ...) end
  -- assert(v, message): Lua's own assert
  local v, message = ...
  if not v then
    if select("#", ...) < 2 then message = "assertion failed!" end
    error(message, 2)
  end
  return ...
end

local assert = new_state()
M.assert = assert

-- assert:register("assertion", name, fn, positive_key, negative_key)
local api = {}
function api.register(_, kind, name, fn, positive, negative)
  if kind == "assertion" then
    local entry = { fn = fn, positive = positive, negative = negative }
    name = name:lower()
    assertions[name] = entry
    -- "has_property" also answers to has_no_property / is_not.property
    local first, rest = name:match("^([^_]+)_(.+)$")
    if first and words[first] and not assertions[rest] then assertions[rest] = entry end
  elseif kind == "modifier" then
    modifiers[name:lower()] = function(state, arguments) fn(state, arguments, 1) end
  elseif kind == "matcher" then
    matchers[name:lower()] = function(...)
      local state = {}
      local test = fn(state, pack(...), 1)
      return function(v) return test(v) end
    end
  else
    error("assert:register: unknown kind '" .. tostring(kind) .. "' (assertion, modifier or matcher)", 2)
  end
end
function api.unregister(_, kind, name)
  if kind == "assertion" then assertions[name] = nil
  elseif kind == "modifier" then modifiers[name] = nil
  elseif kind == "matcher" then matchers[name] = nil end
end
function api.add_formatter(_, fn) formatters[#formatters + 1] = fn end
function api.remove_formatter(_, fn)
  for i = #formatters, 1, -1 do if formatters[i] == fn then table.remove(formatters, i) end end
end
function api.format(_, arguments)
  local shown = { n = arguments.n or #arguments }
  for i = 1, shown.n do shown[i] = format(arguments[i]) end
  return shown
end
function api.set_parameter(_, name, value) parameters[name] = value end
function api.get_parameter(_, name) return parameters[name] end
-- A snapshot: revert() undoes spies and stubs made since, and parameter changes.
function api.snapshot(_)
  local mark = #spies_made
  local saved = {}
  for k, v in pairs(parameters) do saved[k] = v end
  return { revert = function()
    for i = #spies_made, mark + 1, -1 do
      spies_made[i]:revert()
      spies_made[i] = nil
    end
    for k in pairs(parameters) do parameters[k] = nil end
    for k, v in pairs(saved) do parameters[k] = v end
  end }
end
-- assert:register and friends are called with ':' on the assert table itself
state_mt.__index = (function(lookup)
  return function(self, key)
    if api[key] then return api[key] end
    return lookup(self, key)
  end
end)(state_mt.__index)

M.api = api
return M
"""#
