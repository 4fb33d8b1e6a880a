_G.SHARED_GLOBAL = "from a"
package.loaded["made.by.a"] = true
it("sets a global", function() end)
