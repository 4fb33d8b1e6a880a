it("does not match ^check_", function() error("must not run") end)
