-- busted/files.lua: what busted does before the first test: the .busted task, the search
-- paths, `arg`, -e statements, LuaCov, the helper, and loading the spec files. Loaded as
-- "=[busted]" after busted/run.lua; returns the runtime the host calls.
local host, T = ...
local runtime = {}

local function list(value)
  if type(value) == "table" then return value end
  local items = {}
  if value ~= nil then for item in tostring(value):gmatch("[^,]+") do items[#items + 1] = item end end
  return items
end

-- A .busted file (busted/modules/configuration_loader.lua): the task `run` names, else
-- `default`, under `_all`. Returns its options by their command-line names.
function runtime.config(path, run)
  local chunk, err = loadfile(path, "t")
  if not chunk then error(err, 0) end
  local ok, tasks = pcall(chunk)
  if not ok then error(path .. ": " .. tostring(tasks), 0) end
  if type(tasks) ~= "table" then error(path .. ": .busted file does not return a table.", 0) end
  local merged = {}
  local function merge(task) for k, v in pairs(task) do if merged[k] == nil then merged[k] = v end end end
  if run and run ~= "" then
    if type(tasks[run]) ~= "table" then error(path .. ": Task `" .. run .. "` not found, or not a table.", 0) end
    merge(tasks[run])
  elseif type(tasks.default) == "table" then
    merge(tasks.default)
  end
  if type(tasks._all) == "table" then merge(tasks._all) end
  local options = {}
  for key, value in pairs(merged) do
    if type(key) == "string" then
      if type(value) == "table" then
        options[key] = list(value)
      elseif type(value) == "boolean" then
        options[key] = { value and "true" or "false" }
      else
        options[key] = { tostring(value) }
      end
    end
  end
  return options
end

-- Whether a file's base name matches one of busted's `pattern`s (Lua patterns).
function runtime.matches(name, patterns)
  for _, pattern in ipairs(patterns) do
    if pattern ~= "" and name:find(pattern) then return true end
  end
  return false
end

-- Before the files: search paths, `arg` as lua.c and busted set it, -e statements, LuaCov,
-- the helper (run with `arg` set to its -Xhelper options).
function runtime.prepare(given)
  T.options = given
  T.install_globals()
  if given.lpath ~= "" then package.path = (given.lpath .. ";" .. package.path):gsub(";;", ";") end
  if given.cpath ~= "" then package.cpath = (given.cpath .. ";" .. package.cpath):gsub(";;", ";") end
  local arg = { [-1] = given.interpreter, [0] = given.program }
  for i, value in ipairs(given.arguments) do arg[i] = value end
  _G.arg = arg
  -- -e statements and the helper declare at the suite's level (busted.before_each, …)
  T.current = T.root
  for _, statement in ipairs(given.statements) do
    local chunk, err = load(statement, "=(command line)", "t")
    if not chunk then error("-e: " .. err, 0) end
    chunk()
  end
  if given.coverage then
    local ok, luacov = pcall(require, "luacov.runner")
    if not ok then
      error("--coverage: LuaCov not found on the search path (Debian: apt-get install lua-luacov; "
        .. "LuaRocks: luarocks --lua-version 5.4 install luacov)", 0)
    end
    luacov(given.coverage_config)
    local exclude = luacov.configuration and luacov.configuration.exclude
    if type(exclude) == "table" then
      for _, pattern in ipairs { "busted%.", "luassert%.", "say%.", "pl%." } do exclude[#exclude + 1] = pattern end
    end
  end
  T.load_output(given)  -- busted/handlers.lua: the -o handler, before the helper as in busted
  if given.helper ~= "" then
    local helper_arg = { [-1] = arg[-1], [0] = arg[0] }
    for i, value in ipairs(given.helper_arguments) do helper_arg[i] = value end
    _G.arg = helper_arg
    local ok, err = pcall(function()
      if given.helper:match("%.lua$") then dofile(given.helper) else require(given.helper) end
    end)
    _G.arg = arg
    if not ok then error("failed running the specified helper (" .. given.helper .. "), error: " .. tostring(err), 0) end
  end
  T.current = nil
end

-- Loads the spec files; one that does not load becomes one error when its turn comes.
function runtime.plan(paths, rounds)
  local files = {}
  for i, path in ipairs(paths) do
    local chunk, err = loadfile(path, "t", T.env)
    files[i] = { name = path, fn = chunk, load_error = not chunk and err or nil }
  end
  return T.plan(files, rounds)
end

return runtime
