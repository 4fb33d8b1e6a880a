-- failing.lua: a release that goes wrong, to show the failure report. "lint" is a
-- command that prints findings and exits 3; "migrate" is a Lua body whose helper
-- raises, so the report carries a traceback. Their dependents are skipped, the
-- when="failed" "rollback" cleans up, and "docs" (its own queue) is unaffected.
--
--   taskrun examples/failing.lua        # fail fast: "publish docs" is never started (exit 1)
--   taskrun -k examples/failing.lua     # keep going: independent work still finishes (exit 1)
--   taskrun -v examples/failing.lua     # stream every command's output as it runs
--   taskrun -n examples/failing.lua     # the plan; nothing runs

local docs_queue = queue { name = "docs", max_concurrent = 1 }

local lint = operation { name = "lint",
  sh = 'echo "checked 14 files"; echo "src/io.c:12: trailing whitespace" >&2; exit 3' }

-- "4.2.1" -> {4, 2, 1}; anything else raises, and the report shows the traceback.
local function parse_version(text)
  local major, minor, patch = text:match("^(%d+)%.(%d+)%.(%d+)$")
  if not major then error(string.format("bad schema version %q", text)) end
  return { tonumber(major), tonumber(minor), tonumber(patch) }
end

local function read_schema(path)
  sleep(0.2)                         -- stands in for reading the database
  local version = parse_version(path == "db/schema" and "4.2-beta" or "0.0.0")
  return version
end

local migrate = operation { name = "migrate", run = function()
  local version = read_schema("db/schema")
  print("  migrating from " .. table.concat(version, "."))
end }

local build = operation { name = "build", after = { lint }, sh = "sleep 0.1" }
local deploy = operation { name = "deploy", after = { build, migrate },
  run = function() print("  deploying") end }
operation { name = "smoke test", after = { deploy }, sh = { "true" } }

operation { name = "rollback", after = { lint, migrate }, when = "failed", run = function(op)
  for _, dep in ipairs(op.dependencies) do
    print(string.format("  %-8s %s", dep.name, dep.failed and "failed" or "ok"))
  end
  sleep(0.1)
  print("  rolled back the staging slot")
end }

local docs = operation { name = "docs", queue = docs_queue, run = function()
  sleep(0.4)
  local pages = sh("printf 'index\\nguide\\napi\\n' | wc -l").stdout:match("%d+")
  print("  rendered " .. pages .. " pages")
end }

operation { name = "publish docs", after = { docs }, sh = "sleep 0.1" }
