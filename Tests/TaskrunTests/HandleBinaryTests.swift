// Through the binary: a second Ctrl-C ends a cleanup, qos sets the commands' niceness, progress
// words follow the locale and --lang, choose() away from a terminal, a timed-out attempt retried.
import Foundation
import TestSupport
import Testing

@Suite struct HandleBinaryTests {
  func folder(_ files: [String: String]) throws -> URL { try Scratch.folder("handle", files) }

  @Test func aSecondCtrlCEndsACleanupAndLeavesNothingBehind() throws {
    let dir = try folder([
      "w.lua": """
      operation { name = "slow", sh = "sleep 30", cleanup = function()
        local r = sh("echo $$ > cleanup.pid; exec sleep 30")
      end }
      """
    ])
    let run = try Binary.start(["--progress", "plain", "w.lua"], in: dir)
    let started = Date()
    func waitFor(_ what: String, _ condition: () -> Bool) {
      let deadline = Date().addingTimeInterval(20)
      while !condition() && Date() < deadline { usleep(20_000) }
      #expect(condition(), "\(what)")
    }
    waitFor("the command to start") { ((try? String(contentsOf: run.out, encoding: .utf8)) ?? "").contains("start") }
    kill(run.child.pid, SIGINT)
    let pidFile = dir.appendingPathComponent("cleanup.pid")
    waitFor("the cleanup's command to start") { FileManager.default.fileExists(atPath: pidFile.path) }
    let cleanupPid = Int32(
      (try String(contentsOf: pidFile, encoding: .utf8)).trimmingCharacters(in: .whitespacesAndNewlines))!
    usleep(200_000)
    #expect(kill(cleanupPid, 0) == 0, "the first Ctrl-C spares the cleanup")
    kill(run.child.pid, SIGINT)
    let finished = Binary.finish(run, timeout: 30)
    #expect(finished.status == 130, "\(finished.stdout)\(finished.stderr)")
    #expect(Date().timeIntervalSince(started) < 15, "the second Ctrl-C ended the cleanup")
    waitFor("the cleanup's command to be gone") { kill(cleanupPid, 0) != 0 }
  }

  @Test func qosGivesTheCommandsTheirNiceness() throws {
    let dir = try folder([
      "w.lua": """
      for _, qos in ipairs { "utility", "background", "user_initiated" } do
        operation { name = qos, qos = qos, sh = { "sh", "-c", "awk '{ print $19 }' /proc/$$/stat > " .. qos .. ".nice" } }
      end
      operation { name = "plain", sh = { "sh", "-c", "awk '{ print $19 }' /proc/$$/stat > plain.nice" } }
      """
    ])
    let run = try Binary.run(["w.lua"], in: dir)
    #expect(run.status == 0, "\(run.stdout)\(run.stderr)")
    func nice(_ name: String) -> Int? {
      Int(
        ((try? String(contentsOf: dir.appendingPathComponent(name + ".nice"), encoding: .utf8)) ?? "")
          .trimmingCharacters(in: .whitespacesAndNewlines))
    }
    let base = try #require(nice("plain"))
    #expect(nice("utility") == min(19, base + 5) && nice("background") == 19 && nice("user_initiated") == base)
  }

  static let words = """
    local p = progress { total = 6 } p.completed = 3
    print(p.description .. " | " .. p.additional_description)
    local f = progress { total = 5312000, kind = "file", file_operation = "downloading", file_total_count = 9 }
    f.completed = 419000; f.eta = 97
    print(f.description .. " | " .. f.additional_description)
    local n = progress { total = 1234567 } n.completed = 1000
    print(n.additional_description)
    operation { name = "half", run = function() local q = progress { total = 2 } q.completed = 1 end }
    """

  @Test(arguments: [
    (
      ["LANG": "ru_RU.UTF-8"], [String](),
      "Выполнено 50\u{A0}% | 3 из 6\nЗагрузка 9 файлов… | 419 КБ из 5,3 МБ — Осталось около 1 минуты 37 секунд\n1\u{A0}000 из 1\u{A0}234\u{A0}567\n"
    ),
    (
      ["LANG": "en_US.UTF-8", "LC_MESSAGES": "zh_CN.UTF-8"], [],
      "已完成 50% | 3/6\n正在下载 9 个文件… | 419 KB/5.3 MB — 大约还剩 1 分钟 37 秒\n1,000/1,234,567\n"
    ),
    (
      ["LANG": "ru_RU.UTF-8"], ["--lang", "en"],
      "50% completed | 3 of 6\nDownloading 9 files… | 419 KB of 5.3 MB — About 1 minute, 37 seconds remaining\n1,000 of 1,234,567\n"
    ),
    (
      ["LC_ALL": "zh_TW.UTF-8", "LANG": "ru_RU.UTF-8"], [],
      "50% completed | 3 of 6\nDownloading 9 files… | 419 KB of 5.3 MB — About 1 minute, 37 seconds remaining\n1,000 of 1,234,567\n"
    )
  ])
  func progressWordsFollowTheLocaleAndLang(_ environment: [String: String], _ options: [String], _ expected: String)
    throws
  {
    let dir = try folder(["w.lua": Self.words])
    var env = environment
    for key in ["LC_ALL", "LC_MESSAGES", "LANG"] where env[key] == nil { env[key] = "" }
    let run = Binary.finish(
      try Binary.start(options + ["-q", "--events", "e.ndjson", "w.lua"], in: dir, environment: env))
    #expect(run.status == 0 && run.stdout.hasPrefix(expected), "\(run.stdout)\(run.stderr)")
    let events = (try? String(contentsOf: dir.appendingPathComponent("e.ndjson"), encoding: .utf8)) ?? ""
    let first = expected.split(separator: "|")[0].trimmingCharacters(in: .whitespaces)
    #expect(events.contains(#""description":""# + first.replacingOccurrences(of: "50", with: "100")), "\(events)")
  }

  @Test func chooseAwayFromATerminalTakesTheDefaultOrTheAnswerAndSaysSo() throws {
    let dir = try folder([
      "w.lua": """
      operation { name = "upload", run = function()
        print("chose " .. choose("Upload failed", { "Retry", "Skip", "Abort" }, { default = "Skip" }))
      end }
      """,
      "nodefault.lua": #"print(choose("Which?", { "a", "b" }))"#
    ])
    let quiet = try Binary.run(["--progress", "plain", "w.lua"], in: dir)
    #expect(quiet.status == 0 && quiet.stdout.contains("chose Skip"), "\(quiet.stdout)")
    #expect((quiet.stdout + quiet.stderr).contains(#"taskrun: "Upload failed": Skip (the default: not on a terminal)"#))
    let answered = try Binary.run(["--progress", "plain", "--answer", "abort", "w.lua"], in: dir)
    #expect(answered.stdout.contains("chose Abort") && (answered.stdout + answered.stderr).contains("(--answer)"))
    let refused = try Binary.run(["nodefault.lua"], in: dir)
    #expect(
      refused.status == 2
        && refused.stderr.contains(
          #"nodefault.lua:1: cannot ask "Which?": not running on a terminal, and it has no default (give choose() a default, or run with --answer CHOICE)"#
        ),
      "\(refused.stderr)")
    let dry = try Binary.run(["-n", "nodefault.lua"], in: dir)
    #expect(dry.status == 0 && dry.stdout.hasPrefix("a\n"), "a dry run asks nothing: \(dry.stdout)")
  }

  @Test func aTimedOutAttemptIsRetriedAndTheLineSaysSo() throws {
    let dir = try folder([
      "w.lua": """
      operation { name = "t", timeout = 0.2, retries = 1, run = function(op) if op.attempt == 1 then sleep(5) end end }
      """
    ])
    let run = try Binary.run(["--progress", "plain", "w.lua"], in: dir)
    #expect(run.status == 0, "\(run.stdout)\(run.stderr)")
    #expect(run.stdout.contains("retry     t: attempt 1 failed: timed out after 0.20 s; trying again"), "\(run.stdout)")
  }
}
