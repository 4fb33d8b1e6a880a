-- require "busted" as busted's init.lua gives it: its exportApi names, parent and children,
-- unsubscribe(id, channel) in mediator's order, and a table nothing can be written to.
local busted = require "busted"

describe('require "busted"', function()
  local declared_it = it
  local starts = {}
  local subscriber = busted.subscribe({ "test", "start" }, function(element, parent)
    starts[#starts + 1] = { element = element, parent = parent }
    return nil, true
  end)

  it('exports the API busted exports', function()
    for _, name in ipairs { "describe", "context", "insulate", "expose", "it", "spec", "test", "pending",
      "setup", "teardown", "before_each", "after_each", "lazy_setup", "lazy_teardown", "strict_setup",
      "strict_teardown", "publish", "subscribe", "unsubscribe", "bindfenv", "fail", "gettime", "monotime",
      "sleep", "parent", "children" } do
      assert.is_function(busted[name], name)
    end
    assert.is_string(busted.version)
    assert.are.equal(assert, busted.assert)
    assert.are.equal(spy, busted.spy)
  end)

  it('does not export finally, randomize, init or file', function()
    assert.is_nil(busted.finally)
    assert.is_nil(busted.randomize)
    assert.is_nil(busted.init)
    assert.is_nil(busted.file)
  end)

  it('cannot be written to', function()
    assert.has_error(function() busted.it = function() end end)
    assert.has_error(function() busted.new_field = 1 end)
    assert.are.equal(declared_it, busted.it)
    assert.is_nil(rawget(busted, "new_field"))
  end)

  it('gives each element its parent and each block its children', function()
    local last = starts[#starts]
    assert.are.equal('gives each element its parent and each block its children', last.element.name)
    assert.are.equal(last.parent, busted.parent(last.element))
    assert.are.equal('require "busted"', last.parent.name)
    local file = busted.parent(last.parent)
    assert.are.equal('file', file.descriptor)
    local found = 0
    for _, child in ipairs(busted.children(last.parent)) do
      if child == last.element or child == starts[1].element then found = found + 1 end
    end
    assert.are.equal(2, found)
    local mine = false
    for _, child in ipairs(busted.children(file)) do mine = mine or child == last.parent end
    assert.is_true(mine)
  end)

  it('unsubscribe(id, channel) removes the subscriber and returns it', function()
    local seen = {}
    local sub = busted.subscribe({ "api_spec", "event" }, function(...) seen[#seen + 1] = { ... } end)
    assert.is_not_nil(sub.id)
    busted.publish({ "api_spec", "event" }, "first", 1)
    assert.are.equal(sub, busted.unsubscribe(sub.id, { "api_spec", "event" }))
    busted.publish({ "api_spec", "event" }, "second", 2)
    assert.are.same({ { "first", 1 } }, seen)
    assert.are.equal(subscriber, busted.unsubscribe(subscriber.id, { "test", "start" }))
  end)

  it('publish returns what the callbacks return, a parent channel after its children', function()
    local order = {}
    local a = busted.subscribe({ "api_spec" }, function() order[#order + 1] = "parent" return "p", true end)
    local b = busted.subscribe({ "api_spec", "child" }, function() order[#order + 1] = "child" return "c", true end)
    local c = busted.subscribe({ "api_spec", "child" }, function() order[#order + 1] = "first" return "f", true end,
      { priority = 1 })
    assert.are.same({ "f", "c", "p" }, busted.publish({ "api_spec", "child" }))
    assert.are.same({ "first", "child", "parent" }, order)
    busted.unsubscribe(a.id, { "api_spec" })
    busted.unsubscribe(b.id, { "api_spec", "child" })
    busted.unsubscribe(c.id, { "api_spec", "child" })
    assert.are.same({}, busted.publish({ "api_spec", "child" }))
  end)
end)
