-- An error in the file's own body: busted does not map its line (the file is not above
-- itself), so the message names the compiled Lua's line.
value = { one: 1 }

describe "never declared", ->
  it "never runs", ->
    assert.is_true true

error "the body broke, value #{value.one}"
