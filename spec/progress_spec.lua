-- Progress nodes from Lua: Foundation's composition rules.
describe("progress", function()
  it("computes a fraction from completed and total", function()
    local p = progress { total = 4 }
    p.completed = 1
    assert.are.equal(0.25, p.fraction)
    assert.are.equal("25% completed", p.description)
  end)

  it("composes explicit children by their pending units", function()
    local parent = progress { total = 10 }
    local child = progress { total = 2 }
    parent:add_child(child, 6)
    child.completed = 1
    assert.is.near(0.3, parent.fraction, 1e-9)
    child.completed = 2
    assert.are.equal(6, parent.completed)
  end)

  it("takes a loop of updates (raw stores) into the parent's fraction", function()
    local parent = progress { total = 2 }
    local child = progress { total = 1000 }
    parent:add_child(child, 2)
    for i = 1, 500 do child.completed = i end
    assert.are.equal(0.5, parent.fraction)
    for i = 501, 1000 do child.completed = i end
    assert.is_true(child.finished)
    assert.are.equal(2, parent.completed)
  end)

  it("cancels its descendants", function()
    local parent = progress { total = 1 }
    local child = progress { total = 1 }
    parent:add_child(child, 1)
    parent:cancel()
    assert.is_true(child.cancelled)
  end)
end)
