-- busted/files.lua: what busted does before the first test: the .busted task, the search
-- paths, `arg`, -e statements, LuaCov, the helper, and loading the spec files. Loaded as
-- "=[busted]" after busted/run.lua; returns the runtime the host calls.
local host, T = ...
local runtime = { version = T.api_version }

local function list(value)
  if type(value) == "table" then return value end
  local items = {}
  if value ~= nil then for item in tostring(value):gmatch("[^,]+") do items[#items + 1] = item end end
  return items
end

-- The keys taskrun reads (busted's long option names, `ROOT` and `e`); others are ignored,
-- as busted ignores them.
local read_keys = {}
for key in ([[ROOT e pattern exclude-pattern directory output Xoutput Xhelper helper lpath cpath filter
  filter-out name exclude-names-file log-success tags exclude-tags shuffle-files shuffle-tests sort-files
  sort-tests seed repeat keep-going recursive lazy defer-print enable-sound lang lua ignore-lua list
  verbose auto-insulate suppress-pending coverage coverage-config-file loaders]]):gmatch("%S+") do
  read_keys[key] = true
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
      local kind = type(value)
      if read_keys[key] and kind ~= "string" and kind ~= "number" and kind ~= "boolean" and kind ~= "table" then
        error(path .. ": '" .. key .. "' must be a string, a number, a boolean or a list of strings (got a "
          .. kind .. ")", 0)
      end
      if kind == "table" then
        for i, item in ipairs(value) do  -- busted reads a list's items only
          if read_keys[key] and type(item) ~= "string" then
            error(path .. ": '" .. key .. "' must be a list of strings (item " .. tostring(i) .. " is a "
              .. type(item) .. ")", 0)
          end
        end
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

-- Lua patterns an option gives, each checked as string.find would read it: a malformed one
-- is an error that names the option (busted's string.find raises it while it searches).
function runtime.check_patterns(option, patterns)
  for _, pattern in ipairs(patterns) do
    local ok, err = pcall(string.find, "", pattern)
    if not ok then error(option .. " '" .. pattern .. "': " .. tostring(err):gsub("^.-: ", ""), 0) end
  end
end

-- Whether a file's base name matches one of busted's `pattern`s (Lua patterns).
function runtime.matches(name, patterns)
  for _, pattern in ipairs(patterns) do
    if pattern ~= "" and name:find(pattern) then return true end
  end
  return false
end

-- Before the files: MoonScript (if installed), search paths, `arg` as lua.c and busted set
-- it, -e statements, LuaCov, the helper (a .lua or .moon file, else a module, run with `arg`
-- set to its -Xhelper options).
function runtime.prepare(given)
  T.options = given
  T.install_globals()
  local moonscript = T.moonscript()
  if given.lpath ~= "" then package.path = (given.lpath .. ";" .. package.path):gsub(";;", ";") end
  if given.cpath ~= "" then package.cpath = (given.cpath .. ";" .. package.cpath):gsub(";;", ";") end
  local arg = { [-1] = given.interpreter, [0] = given.program }
  for i, value in ipairs(given.arguments) do arg[i] = value end
  _G.arg = arg
  -- --lang: say's namespace (busted's languages name its output's words; luassert's
  -- messages stay English unless a spec loads luassert.languages.X, as under busted)
  local languages = { ar = 1, de = 1, en = 1, es = 1, fr = 1, is = 1, it = 1, ja = 1, nl = 1, ["pt-BR"] = 1,
                      ro = 1, ru = 1, th = 1, ua = 1, zh = 1 }
  if not languages[given.language] then
    error("--lang: busted has no language '" .. given.language .. "' (ar, de, en, es, fr, is, it, ja, nl, pt-BR, "
      .. "ro, ru, th, ua, zh)", 0)
  end
  require("say"):set_namespace(given.language)
  if given.log_success then
    local file, err = io.open(given.log_success, "a")
    if not file then error("--log-success: " .. tostring(err), 0) end
    file:setvbuf("line")
    T.log_success = file
  end
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
      error("--coverage: LuaCov is not installed for Lua 5.4 (Debian 12 has no package: "
        .. "luarocks --lua-version 5.4 install luacov), or run without it: --no-coverage", 0)
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
      if given.helper:match("%.lua$") then
        dofile(given.helper)
      elseif moonscript and given.helper:match("%.moon$") then
        moonscript.dofile(given.helper)
      else
        require(given.helper)
      end
    end)
    _G.arg = arg
    if not ok then
      -- the runtime's own position (where require was called) means nothing to the user
      local why = tostring(err):gsub("^%[busted%]:%d+: ", "")
      error("failed running the specified helper (" .. given.helper .. "), error: " .. why, 0)
    end
  end
  T.current = nil
end

-- Loads the spec files with the loaders --loaders names (busted/loaders.lua); one that does
-- not load becomes one error when its turn comes.
function runtime.plan(paths, rounds)
  return T.plan(T.load_files(paths, T.options.loaders), rounds)
end

return runtime
