-- With -k, independent work goes on; dependents of the failure are skipped, not failed.
-- args: -k -j1 @
-- exit: 1
-- stderr: FAILED    test
-- stdout: skipped   package: dependency 'test' failed
-- stdout: ok        docs
-- stdout: 1 succeeded, 1 failed, 1 skipped in
operation { name = "test", sh = "exit 2" }
operation { name = "package", after = { "test" }, sh = "echo never" }
operation { name = "docs", sh = "true" }
