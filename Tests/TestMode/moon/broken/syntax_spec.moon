-- Does not compile: the file is one error, moonscript's message.
describe "x", ->
  it "y" ->
    = 1
