error("not a test file")
