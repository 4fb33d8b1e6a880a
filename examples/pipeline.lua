-- pipeline.lua: a fetch/compile/test/package pipeline for a tiny C program, all in
-- a scratch directory. The compiles run in parallel (try -j 1 to see the difference),
-- then link, test, package a tar.gz and print its checksum; cleanup runs once the rest has
-- finished, whether it succeeded or failed (when = "finished"), but not after Ctrl-C,
-- which cancels what has not started: the scratch directory then stays in $TMPDIR.
--
--   taskrun examples/pipeline.lua                # build hello-1.0.tar.gz (exit 0)
--   taskrun -v examples/pipeline.lua -- 2.0      # version 2.0, streaming command output
--   taskrun -n examples/pipeline.lua test        # the plan up to the test

local version = arg[1] or "1.0"
local work = os.tmpname()    -- unique name; "fetch" turns it into a directory
os.remove(work)
local src, build = work .. "/src", work .. "/build"

local sources = {
  greet = [[#include <stdio.h>
void greet(const char *who) { printf("hello, %s\n", who); }
]],
  sum = [[#include <stdlib.h>
long sum(int n, char **v) { long s = 0; while (n--) s += atol(*v++); return s; }
]],
  main = [[#include <stdio.h>
#include <string.h>
void greet(const char *who);
long sum(int n, char **v);
int main(int argc, char **argv) {
  if (argc > 1 && strcmp(argv[1], "--sum") == 0) { printf("%ld\n", sum(argc - 2, argv + 2)); return 0; }
  greet(argc > 1 ? argv[1] : "world");
  return 0;
}
]],
}

local fetch = operation { name = "fetch", run = function()
  sh { "mkdir", "-p", src, build }
  sleep(0.2)                             -- stands in for a download
  for name, text in pairs(sources) do
    local file = assert(io.open(src .. "/" .. name .. ".c", "w"))
    file:write(text)
    file:close()
  end
  print("  fetched " .. sh("ls " .. src).stdout:gsub("%s+$", ""):gsub("\n", " "))
end }

local objects, compiles = {}, {}
for _, name in ipairs { "main", "greet", "sum" } do
  objects[#objects + 1] = name .. ".o"
  compiles[#compiles + 1] = operation { name = "compile " .. name, after = { fetch },
    cwd = build, sh = { "cc", "-O2", "-Wall", "-c", "-o", name .. ".o", src .. "/" .. name .. ".c" } }
end

local link = operation { name = "link", after = compiles, cwd = build,
  sh = "cc -o hello " .. table.concat(objects, " ") }

local function expect(command, wanted)
  local got = sh(command, { cwd = build }).stdout
  if got ~= wanted then error(string.format("%s: got %q, want %q", command, got, wanted)) end
end

local test = operation { name = "test", after = { link }, timeout = 10, run = function()
  expect("./hello", "hello, world\n")
  expect("./hello taskrun", "hello, taskrun\n")
  expect("./hello --sum 1 2 39", "42\n")
  print("  3 tests passed")
end }

local pack = operation { name = "package", after = { test }, cwd = work, sh = string.format(
  "mkdir -p hello-%s/bin && cp build/hello hello-%s/bin/ && tar -czf hello-%s.tar.gz hello-%s",
  version, version, version, version) }

local checksum = operation { name = "checksum", after = { pack }, run = function()
  local tarball = "hello-" .. version .. ".tar.gz"
  local listing = sh({ "tar", "-tzf", tarball }, { cwd = work }).stdout
  print(string.format("  %s: %d entries", tarball, select(2, listing:gsub("\n", ""))))
  print("  " .. sh({ "sha256sum", tarball }, { cwd = work }).stdout:gsub("%s+$", ""))
end }

operation { name = "cleanup", after = { checksum }, when = "finished", sh = { "rm", "-rf", work } }
