-- An output handler that does not load.
error("this handler is broken")
