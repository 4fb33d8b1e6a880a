-- busted/loaders.lua: busted's test file loaders (--loaders; busted/modules/files/*.lua and
-- test_file_loader.lua): each takes the files of one extension; a found file that no loader
-- takes is not run, and says nothing. The MoonScript loader compiles .moon files with the
-- `moonscript` module, if it can be required, and maps the compiled Lua's lines back to the
-- .moon file's in declarations, messages and tracebacks, where busted does. Loaded as
-- "=[busted]" after busted/run.lua.
local host, T = ...

-- pl.path.extension: from the last dot of the base name (".moon"), else "".
local function extension(path)
  return path:match("(%.[^./]*)$") or ""
end

-- What a loader gives a file it took: how to rewrite its positions and messages (nil: as
-- they are).
local plain = {}

local moon = {}

-- The line of the .moon file `name` that a line of its compiled Lua comes from (busted's
-- rewrite_linenumber: the nearest mapped line at or above it; the line as it is when the
-- file has no line table).
function moon.line(name, line)
  local map = name and moon.line_tables["@" .. name]
  if not (map and line) then return line end
  for i = line, 0, -1 do
    if map[i] then
      local text = moon.texts[name]
      if not text then
        local file = io.open(name, "r")
        if not file then return line end
        text = file:read("a")
        file:close()
        moon.texts[name] = text
      end
      return moon.util.pos_to_line(text, map[i])
    end
  end
  return line
end

-- moonscript sometimes names a chunk [string "./x.moon"]: the file's name is inside.
local function chunk_file(name)
  return name:match('string "(.+)"') or name
end

-- "file:line: text" with the .moon line, for a message that starts with a position.
local function moon_message(_, message)
  local name, line, rest = message:match("^([^\n]-):(%d+): (.*)")
  if not name then return message end
  name = chunk_file(name)
  return name .. ":" .. tostring(moon.line(name, tonumber(line))) .. ": " .. rest
end

-- A traceback's "file:line:" and "<file:line>" with the .moon lines.
local function moon_traceback(_, trace)
  local function one(line, pattern, form)
    local name, number = line:match(pattern)
    if name and number then
      number = tonumber(number)
      local mapped = moon.line(chunk_file(name), number)
      if mapped then line = line:gsub(form:format(number), form:format(mapped)) end
    end
    return line
  end
  local lines = {}
  for line in trace:gmatch("[^\n]+") do
    lines[#lines + 1] = one(one(line, "%s*(.-):(%d+): ", ":%d:"), "<(.*):(%d+)>", ":%d>")
  end
  return table.concat(lines, "\n")
end

-- A position in the spec file, as busted's getTrace gives it for a file the loader took.
local function moon_position(file, where)
  return { file = chunk_file(where.file), line = moon.line(file, where.line) }
end

local loaders = {}

loaders.lua = {
  takes = function(path) return extension(path) == ".lua" end,
  load = function(path)
    local chunk, err = loadfile(path, "t", T.env)
    return chunk, err, plain
  end,
}

-- The moonscript module, if it can be required. busted requires it when it starts (its
-- helper and output loaders do, before --lpath applies), and again when it makes its
-- MoonScript loader; requiring it lets `require` find .moon modules too.
function T.moonscript()
  if not moon.base then
    local ok, base, line_tables, util = pcall(function()
      return require("moonscript"), require("moonscript.line_tables"), require("moonscript.util")
    end)
    if ok then moon.base, moon.line_tables, moon.util, moon.texts = base, line_tables, util, {} end
  end
  return moon.base
end

loaders.moonscript = {
  prepare = T.moonscript,  -- without moonscript, no file is .moon
  takes = function(path) return moon.base ~= nil and extension(path) == ".moon" end,
  load = function(path)
    -- (the last argument, a table, is moonscript's options: T.env must not be last)
    local chunk, err = moon.base.loadfile(path, "t", T.env, {})
    return chunk, err, { position = moon_position, message = moon_message, traceback = moon_traceback }
  end,
}

loaders.terra = {
  prepare = function()  -- the terra executable's global, else terra as a Lua module
    if loaders.terra.lib ~= nil then return end
    local lib = rawget(_G, "terralib")
    if not lib then
      local ok, module = pcall(require, "terra")
      lib = ok and module or false
    end
    loaders.terra.lib = lib
  end,
  takes = function(path) return extension(path) == ".t" end,
  load = function(path)
    local lib = loaders.terra.lib
    if not lib then
      error("unable to load terra, try running without terra language support enabled or installing terra.", 0)
    end
    local chunk, err = lib.loadfile(path)
    return chunk, err, plain
  end,
}

T.loader_names = { "lua", "moonscript", "terra" }

-- How each spec file was loaded, by its path (what rewrites its positions and messages).
local rewriters = {}

-- The spec files the loaders take, loaded in order: { name, fn, load_error }. The first
-- loader in `names` that takes a file loads it; a file none takes is left out.
function T.load_files(paths, names)
  local chosen = {}
  for _, name in ipairs(names) do
    local loader = loaders[name]
    if not loader then error("unknown loader '" .. tostring(name) .. "'", 0) end
    if loader.prepare then loader.prepare() end
    chosen[#chosen + 1] = loader
  end
  local files = {}
  for _, path in ipairs(paths) do
    for _, loader in ipairs(chosen) do
      if loader.takes(path) then
        local chunk, err, rewrite = loader.load(path)
        if chunk then rewriters[path] = rewrite end
        files[#files + 1] = { name = path, fn = chunk, load_error = not chunk and err or nil }
        break
      end
    end
  end
  return files
end

-- busted.getFile: the spec file above `element` (not the element itself), and how its
-- loader rewrites; nil for a file's own body, the suite and Lua specs.
local function rewriter(element)
  local node = element and element.parent
  while node and node.kind ~= "file" do node = node.parent end
  if not node then return nil end
  local rewrite = rewriters[node.name]
  return rewrite and rewrite ~= plain and rewrite or nil, node.name
end

-- A declaration's position, made in `element`'s body.
function T.rewrite_position(element, where)
  local rewrite, file = rewriter(element)
  return rewrite and rewrite.position(file, where) or where
end

-- An error's message (before busted adds a position) and traceback, raised in `element`.
function T.rewrite_message(element, message)
  local rewrite, file = rewriter(element)
  return rewrite and rewrite.message(file, message) or message
end
function T.rewrite_traceback(element, trace)
  local rewrite, file = rewriter(element)
  return rewrite and trace and rewrite.traceback(file, trace) or trace
end
