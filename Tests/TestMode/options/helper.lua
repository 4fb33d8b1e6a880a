-- A --helper: runs before the specs with arg = its -Xhelper options.
HELPER_ARGS = table.concat(arg, ",")
