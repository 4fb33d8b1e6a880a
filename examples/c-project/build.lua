-- A small C project built incrementally: each object declares its source as input and its
-- object as output, and the compiler's depfile (cc -MD) names the headers it read, so that
-- the next run rebuilds exactly what a changed header reaches. Try:
--   taskrun build.lua            # builds everything
--   taskrun build.lua            # nothing to do: every operation is up to date
--   touch include/greet.h; taskrun build.lua   # touched, not changed: still up to date
--   echo '/* v2 */' >> include/greet.h; taskrun build.lua   # main.o and greet.o compile again, come
--                                # out the same, so the link does not run (early cutoff)
--   sed -i 's/hello/hi/' src/greet.c; taskrun build.lua      # greet.o changes: app links again
--   taskrun why build.lua app    # why it would run (or that it is up to date)
--   taskrun build.lua -- -O2     # other flags: the command (and the key) change, the objects rebuild
--   taskrun why build.lua app -- -O2   # why asks with the same script arguments as the run
local cflags = arg[1] or "-O0"
local objects = {}
for _, name in ipairs { "main", "greet", "count" } do
  local object = "build/" .. name .. ".o"
  objects[#objects + 1] = operation {
    name = name .. ".o",
    sh = { "cc", cflags, "-Iinclude", "-MD", "-MF", "build/" .. name .. ".d", "-c", "src/" .. name .. ".c", "-o", object },
    inputs = "src/" .. name .. ".c",
    outputs = object,
    depfile = "build/" .. name .. ".d",
    key = { cflags = cflags },
    after = "dirs",
  }
end
operation { name = "dirs", sh = "mkdir -p build" }
operation {
  name = "app",
  sh = "cc -o build/app build/main.o build/greet.o build/count.o",
  inputs = { "build/*.o" },
  outputs = "build/app",
  after = objects,
}
operation { name = "test", sh = "./build/app world | grep -q 'world (5)'", after = "app" }
