-- taskrun's operation API, exercised from inside tests (each test is itself an operation).
describe("operations", function()
  it("run and return their results", function()
    local answer = operation { run = function() return 42 end }
    run(answer)
    assert.are.equal("finished", answer.state)
    assert.is_true(answer.succeeded)
    assert.are.equal(42, answer.result)
  end)

  it("run after their dependencies", function()
    local order = {}
    local first = operation { run = function() order[#order + 1] = "first" end }
    local second = operation { after = { first }, run = function() order[#order + 1] = "second" end }
    run(second)
    assert.are.same({ "first", "second" }, order)
  end)

  it("report a failing body with its message", function()
    local broken = operation { run = function() error("disk full") end }
    assert.is_false(run(broken))
    assert.is_true(broken.failed)
    assert.matches("disk full", broken.error)
  end)

  it("skip dependents of a failure unless when = finished", function()
    local broken = operation { run = function() error("no") end }
    local cleanup = operation { after = { broken }, when = "finished", run = function() return "ran" end }
    local publish = operation { after = { broken }, run = function() return "ran" end }
    run(cleanup, publish)
    assert.are.equal("ran", cleanup.result)
    assert.is_true(publish.skipped)
  end)

  it("run commands", function()
    local result = sh("printf hello")
    assert.are.equal(0, result.status)
    assert.are.equal("hello", result.stdout)
  end)

  it("overlap when they wait", function()
    local events = {}
    local both = queue { max_concurrent = 2 }
    local function napper(name)
      return operation { queue = both, run = function()
        events[#events + 1] = name .. " starts"
        sleep(0.05)
        events[#events + 1] = name .. " ends"
      end }
    end
    run(napper("a"), napper("b"))
    assert.are.same({ "a starts", "b starts", "a ends", "b ends" }, events)
  end)
end)
