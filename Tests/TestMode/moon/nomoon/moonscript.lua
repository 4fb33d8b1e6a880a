-- Stands in for a missing moonscript (LUA_PATH_5_4=<this folder>/?.lua;;): requiring it
-- fails, as it does where MoonScript is not installed.
error("module 'moonscript' not found (this folder hides it)")
