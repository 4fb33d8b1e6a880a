-- benchmarks/output.lua: one command whose output no one reads, for the output throughput row.
--   taskrun -q benchmarks/output.lua -- FILE
-- `cat FILE` as an operation: taskrun reads its pipe, cuts it into lines, keeps its tail
-- (and past --output-limit the stream in a file, removed after the success).
operation { name = "output", sh = { "cat", assert(arg[1], "usage: output.lua -- FILE") } }
