import LuaHost
import TaskEngine
// progress{} from Lua: NSProgress semantics as a script sees them.
import Testing

@Suite struct ProgressAPITests {
  @Test func theFirstProgressABodyMakesStandsForTheWholeOperation() throws {
    let host = try runLua(
      """
      operation { name = "import", run = function(op)
        local p = progress { total = 4 }
        current_was_op = progress.current() == op.progress
        parent_was_op = p.parent == op.progress
        p.completed = 1
        quarter = op.progress.fraction
        local second = progress { total = 2 }
        second_parent = second.parent
      end }
      """)
    try host.check(
      """
      assert(current_was_op and parent_was_op)
      assert(quarter == 0.25, quarter)
      assert(second_parent == nil, "only the first implicit child attaches")
      """)
    let progress = host.op("import").progress
    #expect(
      host.op("import").succeeded && !progress.isFinished && progress.fraction == 0.25,
      "a node with children is not completed by hand: it ends where its child left it")
  }

  @Test func explicitAndImplicitCompositionFollowFoundation() throws {
    let host = try runLua(
      """
      album = progress { total = 10 }
      photo = progress { total = 100 }
      album:add_child(photo, 9)
      photo.completed = 50
      half_of_nine = album.fraction                  -- 4.5 / 10
      photo.completed = 100
      settled = album.completed                       -- a finished child adds its units
      album:become_current(1)
      album:resign_current()                          -- no child made: the unit completes
      after_resign = album.completed
      """)
    try host.check(
      """
      assert(math.abs(half_of_nine - 0.45) < 1e-9, half_of_nine)
      assert(settled == 9 and after_resign == 10 and album.finished)
      """)
  }

  @Test func defaultsAndFileDescriptions() throws {
    let host = try runLua(
      """
      p = progress { total = 6, completed = 3 }
      f = progress { total = 5300000, completed = 419000, kind = "file", file_operation = "downloading", file_total_count = 9 }
      q = progress {}
      """)
    try host.check(
      """
      assert(p.description == "50% completed", p.description)
      assert(p.additional_description == "3 of 6", p.additional_description)
      assert(f.additional_description:find("419 KB of 5.3 MB", 1, true), f.additional_description)
      assert(f.description == "Downloading 9 files…", f.description)
      assert(q.indeterminate and q.fraction == 0)
      p.description = "Importing"
      assert(p.description == "Importing")
      """)
  }

  @Test func cancelPauseAndResumePropagateAndFireHandlers() throws {
    let host = try runLua(
      """
      events = {}
      album = progress { total = 2, pausable = true, on_pause = function(p) events[#events + 1] = "album paused" end }
      photo = progress { total = 1, pausable = true,
        on_pause = function() events[#events + 1] = "photo paused" end,
        on_resume = function() events[#events + 1] = "photo resumed" end,
        on_cancel = function(p) events[#events + 1] = "photo cancelled " .. tostring(p.cancelled) end }
      album:add_child(photo, 1)
      album:pause()
      album:resume()
      album:cancel()
      late = progress { total = 1 }
      album:add_child(late, 1)
      """)
    try host.check(
      """
      local text = table.concat(events, ", ")
      assert(text == "album paused, photo paused, photo resumed, photo cancelled true", text)
      assert(late.cancelled, "a child added to a cancelled parent is cancelled")
      """)
  }

  @Test func observeIsCoalescedAndSeesTheLatestState() throws {
    let host = try runLua(
      """
      seen = {}
      operation { name = "work", run = function()
        local p = progress { total = 1000 }
        p:observe(function(node) seen[#seen + 1] = node.completed end)
        for i = 1, 1000 do p.completed = i end
        sleep(1)
      end }
      """)
    try host.check("assert(#seen == 1 and seen[1] == 1000, #seen)")
  }

  // After the first, `p.completed = n` is a raw table store (fast); the host catches up
  // before any Swift code looks, so nothing a script or the engine sees is stale.
  @Test func updatesInALoopReachTheEngineWheneverSwiftLooks() throws {
    let host = try runLua(
      """
      operation { name = "loop", run = function(op)
        local p = progress { total = 10 }
        local q = progress { total = 4 }
        for i = 1, 4 do p.completed = i end
        at_four = { op.progress.fraction, p.fraction, tostring(p) }   -- host calls see the loop
        for i = 1, 3 do q.completed = i; p.completed = 4 + i end      -- two handles in turn
        both = { p.completed, q.completed, q.fraction }
        for i = 8, 9 do p.completed = i end
        sleep(1)                                                      -- a yield, then the engine looks
        for i = 1, 10 do p.completed = i end                          -- the body ends right after
        last = p
      end }
      handled = progress { total = 3 }
      operation { name = "observed", observers = { observer { on_finish = function()
        for i = 1, 3 do handled.completed = i end
      end } } }
      """)
    try host.check(
      """
      assert(at_four[1] == 0.4 and at_four[2] == 0.4, at_four[1])
      assert(at_four[3] == "<progress 4 of 10: 40% completed>", at_four[3])
      assert(both[1] == 7 and both[2] == 3 and both[3] == 0.75)
      assert(rawget(last, "completed") == nil and last.completed == 10, "synced when the body ended")
      """)
    #expect(host.op("loop").progress.completed == 1 && host.op("loop").progress.isFinished)
    try host.check("assert(handled.finished and handled.completed == 3)")
  }

  @Test func aBadCompletedStoredRawFailsTheBodyThatStoredIt() throws {
    let host = try runLua(
      """
      operation { name = "fraction", run = function()
        local p = progress { total = 10 }
        p.completed = 3
        p.completed = 2.5           -- raw: found when the body ends
      end }
      operation { name = "text", run = function()
        local p = progress { total = 10 }
        p.completed = 1
        p.completed = "half"        -- raw: found at the next host call
        local _ = p.fraction
      end }
      operation { name = "cleared", run = function()
        local p = progress { total = 10 }
        p.completed = 1
        p.completed = nil
        sleep(1)                    -- found when the body yields
      end }
      """)
    #expect(host.op("fraction").error == "progress: 'completed' must be a whole number from -2^53 to 2^53 (got 2.5)")
    #expect(
      host.op("text").error
        == "spec.lua:10: progress: 'completed' must be a whole number from -2^53 to 2^53 (got string)")
    #expect(host.op("cleared").error == "progress: 'completed' must be a whole number from -2^53 to 2^53 (got nil)")
  }

  @Test func commandOutputCanDriveProgress() throws {
    let host = try runLua(
      """
      op = operation { name = "build", sh = "echo '[1/4] a'; echo '[3/4] c'", progress = "%[(%d+)/(%d+)%]" }
      """, realTime: true)
    let progress = host.op("build").progress
    #expect(progress.total == 4 && progress.completed == 4 && progress.isFinished)
  }

  @Test func badProgressFieldsAreScriptErrors() {
    #expect(
      loadError("progress { totl = 3 }")
        == "spec.lua:1: progress: unknown field 'totl'; did you mean 'total'? (valid fields: total, completed, kind, description, additional_description, cancellable, pausable, throughput, eta, file_operation, file_url, file_total_count, file_completed_count, user_info, on_cancel, on_pause, on_resume)"
    )
    #expect(
      loadError("local p = progress { total = 2 }; p.fraction = 1") == "spec.lua:1: progress: 'fraction' is read-only")
    #expect(
      loadError("progress { total = 1.5 }")
        == "spec.lua:1: progress: field 'total' must be a whole number from -2^53 to 2^53 (got 1.5)")
    #expect(
      loadError("operation { run = function() end, progress = '(%d+)' }")
        == "spec.lua:1: operation: 'env', 'cwd' and 'progress' apply to 'sh' commands only")
  }
}
