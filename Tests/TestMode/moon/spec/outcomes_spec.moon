-- A MoonScript spec: busted compiles it with moonscript and maps its messages back to these
-- lines (the compiled Lua's lines differ).
describe "a moon spec", ->
  it "passes", ->
    assert.are.equal 2, 1 + 1

  it "fails on its own line", ->
    value = { one: 1 }
    assert.are.equal 2, value.one
    value.one = 2 -- (the assertion as the last line would be a tail call, with no line)

  it "errors on its own line", ->
    error "broken here"

  it "errors with a table", ->
    error { code: 1 }

  pending "is pending"

  describe "inner", ->
    before_each ->
      error "before_each broke"

    it "does not count", ->
      assert.is_true true

  it "is declared by a tail call", ->
    assert.is_true true
