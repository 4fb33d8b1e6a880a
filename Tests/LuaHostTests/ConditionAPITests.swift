// Conditions from Lua: the WWDC vocabulary as scripts use it.
import Foundation
import LuaHost
import TaskEngine
import Testing

@Suite struct ConditionAPITests {
  @Test func evaluateDecidesRunFailOrSkip() throws {
    let host = try runLua(
      """
      yes = condition { name = "yes", evaluate = function(op) return true end }
      no = condition { name = "token", evaluate = function() return false, "no token" end }
      later = condition { name = "weekday", evaluate = function() return nil, "it is Sunday" end }
      boom = condition { name = "boom", evaluate = function() error("broken check") end }
      slow = condition { name = "slow", evaluate = function(op) sleep(1) return op.name == "waits" end }
      operation { name = "runs", conditions = { yes } }
      operation { name = "fails", conditions = { yes, no } }
      operation { name = "skips", conditions = { later } }
      operation { name = "errs", conditions = { boom } }
      operation { name = "waits", conditions = { slow } }
      """)
    #expect(host.op("runs").succeeded && host.op("waits").succeeded)
    #expect(host.op("fails").error == "condition 'token' failed: no token")
    #expect(host.op("skips").skipped && host.op("skips").error == "condition 'weekday': it is Sunday")
    #expect(host.op("errs").error == "condition 'boom' failed: spec.lua:4: broken check")
    #expect(host.op("waits").startTime == 1)
  }

  @Test func theLoginPattern() throws {
    let host = try runLua(
      """
      logged_in = false
      auth = condition { name = "logged-in",
        dependency = function() return operation { name = "login", run = function() sleep(1) logged_in = true end } end,
        evaluate = function() return logged_in, "not logged in" end }
      save = operation { name = "save favorites", conditions = { auth } }
      """)
    #expect(host.op("login").succeeded)
    #expect(host.op("save favorites").succeeded && host.op("save favorites").startTime == 1)
    try host.check("assert(#save.dependencies == 1 and save.dependencies[1].name == 'login')")
  }

  @Test func silentSkipsTheDependencyAndCompoundsCombine() throws {
    let host = try runLua(
      """
      produced = 0
      auth = condition { name = "auth", dependency = function() produced = produced + 1 return operation {} end,
                         evaluate = function() return produced > 0, "never asked" end }
      operation { name = "quiet", conditions = { silent(auth) } }
      operation { name = "quiet-ok", conditions = { silent(exists "/") } }
      operation { name = "neither", conditions = { any(negate(exists "/"), exists "/no/such") } }
      operation { name = "both", conditions = { all(exists "/", negate(exists "/no/such")) } }
      """)
    #expect(host.op("quiet").error == "condition 'auth' failed: never asked")
    #expect(host.op("quiet-ok").succeeded)
    #expect(host.op("neither").failed)
    #expect(host.op("both").succeeded)
  }

  @Test func aMutexKeepsOperationsApartAndWhyNamesTheHolder() throws {
    let host = try runLua(
      """
      local migrations = {}
      for i = 1, 3 do
        migrations[i] = operation { name = "migrate" .. i, conditions = { mutex "db" }, run = function() sleep(1) end }
      end
      operation { name = "watcher", run = function() sleep(0.5) why = migrations[2]:why() end }
      """, jobs: 8)
    #expect(host.op("migrate3").startTime == 2 && host.scheduler.elapsed == 3)
    try host.check("assert(why == \"'migrate2' is ready, but waits for mutex 'db' (held by 'migrate1')\", why)")
  }

  @Test func resourceAllowsNAtATime() throws {
    let host = try runLua(
      """
      for i = 1, 4 do
        operation { name = "job" .. i, conditions = { resource("gpu", 2) }, run = function() sleep(1) end }
      end
      """, jobs: 8)
    #expect(host.scheduler.elapsed == 2)
  }

  @Test func conditionErrorsAreScriptErrors() {
    #expect(
      loadError("operation { conditions = { 'db' } }")
        == "spec.lua:1: operation: conditions are made by condition{}, mutex, resource, exists, negate, silent, all or any (got string)"
    )
    #expect(
      loadError("condition { name = 'x', evaluat = function() end }")
        == "spec.lua:1: condition 'x': unknown field 'evaluat'; did you mean 'evaluate'? (valid fields: name, evaluate, dependency)"
    )
    #expect(
      loadError("negate(mutex 'db')")
        == "spec.lua:1: negate: a mutex or resource cannot be combined; list it in conditions directly")
    #expect(
      loadError("operation { conditions = { resource('r', 2) } } operation { conditions = { resource('r', 3) } }")
        == "spec.lua:1: resource 'r' already has capacity 2, not 3")
  }
}

/// A TCP listener on 127.0.0.1 for reachable() to find.
final class Listener {
  let fd: Int32
  let port: Int
  init() throws {
    let socketFD = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    address.sin_port = 0
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    _ = withUnsafePointer(to: &address) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(socketFD, $0, length) }
    }
    listen(socketFD, 4)
    _ = withUnsafeMutablePointer(to: &address) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(socketFD, $0, &length) }
    }
    fd = socketFD
    port = Int(UInt16(bigEndian: address.sin_port))
  }
  deinit { close(fd) }
}

final class Asked: @unchecked Sendable {
  let lock = NSLock()
  var inside = 0, most = 0, prompts: [String] = []
}

@Suite struct NetworkAndPromptTests {
  @Test func reachableConnectsForReal() throws {
    let listener = try Listener()
    let closedPort = try Listener().port  // closed again at once: nothing listens there
    let host = try runLua(
      """
      operation { name = "up", conditions = { reachable("127.0.0.1", \(listener.port)) } }
      operation { name = "down", conditions = { reachable("127.0.0.1", \(closedPort), 1) } }
      """, realTime: true)
    #expect(host.op("up").succeeded)
    #expect(
      host.op("down").error
        == "condition 'reachable 127.0.0.1:\(closedPort)' failed: cannot connect to 127.0.0.1:\(closedPort): Connection refused"
    )
  }

  func runConfirm(assumeYes: Bool, ask: (@Sendable (String) -> Bool?)?) throws -> ScriptHost {
    let scheduler = Scheduler(clock: MonotonicClock(), jobs: 4)
    scheduler.keepGoing = true
    let host = ScriptHost(scheduler: scheduler)
    host.assumeYes = assumeYes
    host.ask = ask
    try host.execute(
      source: """
        operation { name = "deploy", conditions = { confirm "Deploy to production?" } }
        operation { name = "wipe", conditions = { confirm "Wipe the cache?" } }
        """, name: "@spec.lua")
    _ = host.run(try host.select(targets: []))
    return host
  }

  @Test func confirmAsksOneAtATimeAndHonoursTheAnswer() throws {
    let asked = Asked()
    let host = try runConfirm(assumeYes: false) { prompt in
      asked.lock.lock(); asked.inside += 1; asked.most = max(asked.most, asked.inside); asked.prompts.append(prompt);
      asked.lock.unlock()
      usleep(100_000)
      asked.lock.lock(); asked.inside -= 1; asked.lock.unlock()
      return prompt.hasPrefix("Deploy")
    }
    #expect(host.op("deploy").succeeded)
    #expect(host.op("wipe").error == "condition 'confirm' failed: \"Wipe the cache?\": declined")
    #expect(asked.most == 1 && asked.prompts.count == 2, "prompts are serialized like alerts")
  }

  @Test func withoutATerminalConfirmFailsUnlessYes() throws {
    let refused = try runConfirm(assumeYes: false, ask: nil)
    #expect(
      refused.op("deploy").error
        == "condition 'confirm' failed: cannot ask \"Deploy to production?\": not running on a terminal (--yes answers yes)"
    )
    let yes = try runConfirm(assumeYes: true, ask: nil)
    #expect(yes.op("deploy").succeeded && yes.op("wipe").succeeded)
  }
}

@Suite struct ErrorKindTests {
  @Test func eachWayOfNotSucceedingHasItsKind() throws {
    let host = try runLua(
      """
      cmd = operation { name = "cmd", sh = "exit 3" }
      lua = operation { name = "lua", run = function() error("x") end }
      cond = operation { name = "cond", conditions = { condition { evaluate = function() return false, "no" end } } }
      dep = operation { name = "dep", after = { cmd } }
      slow = operation { name = "slow", timeout = 1, run = function() sleep(5) end }
      victim = operation { name = "victim", run = function() sleep(5) end }
      operation { name = "canceller", run = function() sleep(0.5) victim:cancel() end }
      g = group { name = "g", operation { name = "inner", sh = "exit 1" } }
      fine = operation { name = "fine" }
      """)
    try host.check(
      """
      local kinds = {}
      for _, op in ipairs { cmd, lua, cond, dep, slow, victim, g, fine } do kinds[#kinds + 1] = op.name .. "=" .. tostring(op.error_kind) end
      local text = table.concat(kinds, " ")
      assert(text == "cmd=command lua=script cond=condition dep=dependency slow=timeout victim=cancelled g=child fine=nil", text)
      """)
  }
}

@Suite struct ConditionReturnTests {
  @Test func evaluateMayReturnAConditionWhichThenDecides() throws {
    let host = try runLua(
      """
      token = condition { name = "logged-in", evaluate = function() return os.getenv("NO_SUCH_VARIABLE") ~= nil or exists("/no/such/token"), "no token" end }
      here = condition { name = "here", evaluate = function() return false or exists("/") end }
      operation { name = "upload", conditions = { token } }
      operation { name = "local", conditions = { here } }
      """)
    #expect(host.op("upload").error == "condition 'logged-in' failed: no token ('/no/such/token' does not exist)")
    #expect(host.op("local").succeeded)
  }
}
