// --output through the binary: blocks of parallel operations never interleave, keep-order, errors, CI folding.
import Foundation
import TestSupport
import Testing

@Suite struct OutputModeTests {
  /// Runs `script` (w.lua in a folder of its own) with plain progress, no run store, and
  /// `arguments`; `environment` adds variables (a CI service's, say).
  func run(_ script: String, _ arguments: [String], environment: [String: String] = [:], timeout: Double = 120)
    throws -> Run
  {
    let dir = Scratch.root.appendingPathComponent("taskrun-output-mode-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
    try script.write(to: dir.appendingPathComponent("w.lua"), atomically: true, encoding: .utf8)
    let started = try Binary.start(
      ["--progress", "plain", "--no-store"] + arguments + ["w.lua"], in: dir, environment: environment)
    return Binary.finish(started, timeout: timeout)
  }

  /// Two operations that write their lines in turns (a1, b1, a2, b2, …: each waits for the
  /// other's file before the next), one that writes nothing, and one that writes to stderr.
  static let interleaved = """
    local function turns(me, other)
      local lines = {}
      for i = 1, 4 do
        lines[#lines + 1] = string.format(
          "echo %s%d; : > %s%d; n=0; while [ ! -e %s%d ] && [ $n -lt 100 ]; do sleep 0.05; n=$((n+1)); done",
          me, i, me, i, other, i)
      end
      return table.concat(lines, "; ")
    end
    operation { name = "a", sh = turns("a", "b") }
    operation { name = "b", sh = turns("b", "a") .. "; echo b-err >&2" }
    operation { name = "silent", sh = "true" }
    """

  /// The lines of `text` from the header line of `name`'s block on: the header and its lines.
  func block(_ name: String, in text: String) -> [Substring] {
    let lines = text.split(separator: "\n")
    guard let header = lines.firstIndex(where: { $0.hasPrefix("ok ") && $0.contains(" \(name) (") }) else { return [] }
    return Array(lines[header...].prefix { $0 == lines[header] || $0.hasPrefix("    | ") })
  }

  @Test func groupPrintsEachOperationsOutputAsOneBlock() throws {
    let run = try run(Self.interleaved, ["-j3", "--output", "group"])
    #expect(run.status == 0, "\(run.stdout)\(run.stderr)")
    #expect(block("a", in: run.stdout).dropFirst() == ["    | a1", "    | a2", "    | a3", "    | a4"], "\(run.stdout)")
    #expect(
      block("b", in: run.stdout).dropFirst() == ["    | b1", "    | b2", "    | b3", "    | b4", "    | b-err"],
      "stdout and stderr in one block, in the order they came: \(run.stdout)")
    #expect(block("silent", in: run.stdout).count == 1, "no output, no block: \(run.stdout)")
  }

  @Test(.enabled(if: TerminalTests.hasTmux)) func underTheLiveViewBlocksScrollAboveIt() throws {
    let dir = Scratch.root.appendingPathComponent("taskrun-output-mode-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
    try Self.interleaved.write(to: dir.appendingPathComponent("w.lua"), atomically: true, encoding: .utf8)
    let session = try TerminalSession("\(Binary.url.path) --no-store -j3 --output group w.lua", in: dir, height: 40)
    let screen = session.wait { $0.contains("EXIT=") }
    #expect(screen.contains("EXIT=0"), "\(screen)")
    let lines = screen.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }
    for name in ["a", "b"] {
      guard let header = lines.firstIndex(where: { $0.hasPrefix("ok") && $0.contains(" \(name) (") }) else {
        Issue.record("no block for \(name): \(screen)")
        continue
      }
      #expect(
        Array(lines[(header + 1)...].prefix(4)) == (1...4).map { "| \(name)\($0)" }, "\(name)'s block: \(screen)")
    }
  }

  @Test func withoutAModeTheOutputOfSuccessesIsNotShownAndVerboseStillPrefixes() throws {
    let plain = try run(Self.interleaved, ["-j3"])
    #expect(plain.status == 0 && !plain.stdout.contains("| a1"), "\(plain.stdout)")
    for arguments in [["-v"], ["--output", "prefixed"], ["-v", "--output", "prefixed"]] {
      let run = try run(Self.interleaved, ["-j3"] + arguments)
      #expect(run.status == 0, "\(arguments): \(run.stdout)\(run.stderr)")
      #expect(run.stdout.contains("[a] a1\n") && run.stdout.contains("[b] b-err\n"), "\(arguments): \(run.stdout)")
    }
  }

  /// Each waits for the one declared after it to finish: they finish last to first.
  static let reverse = """
      operation { name = "first", sh = "echo one; n=0; while [ ! -e second.done ] && [ $n -lt 200 ]; do sleep 0.05; n=$((n+1)); done" }
      operation { name = "second", sh = "echo two; n=0; while [ ! -e third.done ] && [ $n -lt 200 ]; do sleep 0.05; n=$((n+1)); done; sleep 0.2; : > second.done" }
      operation { name = "quiet", sh = "true" }
      operation { name = "third", sh = "echo three; sleep 0.2; : > third.done" }
    """

  @Test func keepOrderPrintsTheBlocksInDeclarationOrderWhenTheyFinishInReverse() throws {
    let run = try run(Self.reverse, ["-j4", "--output", "keep-order", "--events", "events.jsonl"])
    #expect(run.status == 0, "\(run.stdout)\(run.stderr)")
    let blocks = run.stdout.split(separator: "\n").filter { $0.hasPrefix("    | ") }
    #expect(blocks == ["    | one", "    | two", "    | three"], "\(run.stdout)")
    let headers = run.stdout.split(separator: "\n").filter { $0.hasPrefix("ok ") && !$0.contains("quiet") }
    #expect(headers.map { $0.split(separator: " ").dropFirst().first } == ["first", "second", "third"], "\(run.stdout)")
  }

  @Test(.enabled(if: TerminalTests.hasTmux)) func keepOrderUnderTheLiveView() throws {
    let dir = Scratch.root.appendingPathComponent("taskrun-output-mode-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
    try Self.reverse.write(to: dir.appendingPathComponent("w.lua"), atomically: true, encoding: .utf8)
    let session = try TerminalSession("\(Binary.url.path) --no-store -j4 --output keep-order w.lua", in: dir)
    let screen = session.wait { $0.contains("EXIT=") }
    #expect(screen.contains("EXIT=0"), "\(screen)")
    let blocks = screen.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }.filter {
      $0.hasPrefix("| ")
    }
    #expect(blocks == ["| one", "| two", "| three"], "\(screen)")
  }

  @Test func aHeldBlockKeepsAtMostTheOutputLimitAndSaysWhatItDropped() throws {
    let run = try run(
      """
      operation { name = "slow", sh = "sleep 0.5; echo slow" }
      operation { name = "loud", sh = "seq 1 400000" }
      """, ["-j2", "--output", "keep-order", "--output-limit", "1"])
    #expect(run.status == 0, "\(run.stdout.suffix(2000))\(run.stderr)")
    let lines = run.stdout.split(separator: "\n")
    let note = lines.first { $0.contains("earlier lines not kept (--output-limit)") }
    #expect(note != nil, "\(run.stdout.prefix(2000))")
    let kept = lines.filter { $0.hasPrefix("    | ") && !$0.contains("…") }.count
    #expect(kept > 1000 && kept < 200_000, "kept \(kept) lines")
    #expect(lines.last { $0.hasPrefix("    | ") } == "    | 400000", "the block keeps the end")
    #expect(lines.firstIndex { $0 == "    | slow" }! < lines.firstIndex { $0.hasPrefix("ok ") && $0.contains("loud") }!)
  }

  @Test func errorsShowsOnlyTheRootFailureAndOneLineForWhatItStopped() throws {
    let run = try run(
      """
      operation { name = "noise", sh = "echo noisy-success" }
      operation { name = "compile", sh = "sleep 0.3; echo compile-output; exit 1" }
      group { name = "outer", operation { name = "inner", sh = "sleep 0.5; echo inner; exit 1" } }
      local p = "compile"
      for i = 1, 20 do p = operation { name = "link" .. i, after = { p }, sh = "echo never" }.name end
      operation { name = "later", after = { "noise" }, sh = "sleep 1; echo later" }
      """, ["-j2", "--output", "errors"])
    #expect(run.status == 1, "\(run.stdout)\(run.stderr)")
    #expect(run.stderr.contains("FAILED    compile") && run.stderr.contains("compile-output"), "\(run.stderr)")
    #expect(!run.stdout.contains("noisy-success") && !run.stderr.contains("noisy-success"))
    #expect(!run.stderr.contains("FAILED    outer"), "a group failing for its child is not a root: \(run.stderr)")
    #expect(!(run.stdout + run.stderr).contains("skipped   "), "no line per skipped operation")
    let because = run.stderr.split(separator: "\n").filter { $0.contains("because 'compile' failed") }
    #expect(because.count == 1, "\(run.stderr)")
    #expect(because.first?.hasPrefix("2") == true, "\(because)")  // 20 links + inner (+ later, cancelled)
  }

  @Test func errorsOverACascadeOf100000OperationsPrintsOneLine() throws {
    let run = try run(
      """
      local p = operation { name = "compile", sh = "echo broke; exit 1" }
      for i = 1, 100000 do p = operation { name = "n" .. i, after = { p } } end
      """, ["--output", "errors"], timeout: 300)
    #expect(run.status == 1, "\(run.stdout.prefix(2000))\(run.stderr.prefix(2000))")
    let lines = (run.stdout + run.stderr).split(separator: "\n")
    #expect(lines.count < 20, "\(lines.prefix(30))")
    #expect(lines.contains("100000 operations skipped because 'compile' failed"), "\(lines)")
  }

  /// A success that prints, one that prints nothing and a failure that prints.
  static let mixed = """
    operation { name = "loud", sh = "echo loud-line" }
    operation { name = "silent", sh = "true" }
    operation { name = "bad", after = { "loud" }, sh = "echo bad-line; exit 2" }
    """

  @Test func onGitHubActionsBlocksAreFoldedAndFailuresAreNot() throws {
    let run = try run(Self.mixed, ["-j1"], environment: ["GITHUB_ACTIONS": "true"])
    #expect(run.status == 1, "\(run.stdout)\(run.stderr)")
    let out = run.stdout.split(separator: "\n")
    let start = out.firstIndex { $0.hasPrefix("::group::loud (") }
    #expect(start != nil, "group is CI's default: \(run.stdout)")
    if let start {
      #expect(Array(out[(start + 1)...].prefix(3)).dropFirst() == ["    | loud-line", "::endgroup::"], "\(run.stdout)")
    }
    #expect(out.filter { $0.hasPrefix("::group::") }.count == 1, "one block: \(run.stdout)")
    #expect(!run.stderr.contains("::group::") && run.stderr.contains("    | bad-line"), "\(run.stderr)")
    #expect(out.filter { $0 == "::endgroup::" }.count == 1)
  }

  @Test func onGitLabSectionsHaveUniqueIdsAndOpenCollapsed() throws {
    let run = try run(
      Self.mixed + "operation { name = \"also\", sh = \"echo also-line\" }\n", ["-j1", "-k"],
      environment: ["GITLAB_CI": "true"])
    #expect(run.status == 1, "\(run.stdout)\(run.stderr)")
    let starts = run.stdout.split(separator: "\n").filter { $0.contains("section_start:") }
    let ends = run.stdout.split(separator: "\n").filter { $0.contains("section_end:") }
    #expect(starts.count == 2 && ends.count == 2, "\(run.stdout)")
    let ids = starts.compactMap { $0.split(separator: ":").dropFirst(2).first?.split(separator: "[").first }
    #expect(
      Set(ids).count == 2 && ids.allSatisfy { $0.allSatisfy { $0.isLetter || $0.isNumber || "_.-".contains($0) } })
    #expect(starts.allSatisfy { $0.hasPrefix("\u{1B}[0Ksection_start:") && $0.contains("[collapsed=true]\r\u{1B}[0K") })
    #expect(!run.stderr.contains("section_"), "a failure is not folded: \(run.stderr)")
    // A section spans the operation: from the second it started to a later one it ended in.
    let times = { (lines: [Substring]) in
      lines.compactMap { $0.split(separator: ":").dropFirst().first.flatMap { Int($0) } }
    }
    #expect(zip(times(starts), times(ends)).allSatisfy { $0 < $1 }, "\(starts) \(ends)")
  }

  @Test func onBuildkiteSuccessesGetAHeadingAndAFailureOneThatIsOpen() throws {
    let run = try run(Self.mixed, ["-j1"], environment: ["BUILDKITE": "true"])
    #expect(run.status == 1, "\(run.stdout)\(run.stderr)")
    let out = run.stdout.split(separator: "\n")
    #expect(out.contains { $0.hasPrefix("--- loud (") }, "\(run.stdout)")
    #expect(out.contains { $0.hasPrefix("+++ bad (FAILED") }, "\(run.stdout)")
    #expect(out.contains("+++ taskrun summary"), "the summary is under no block's heading: \(run.stdout)")
  }

  @Test func foldingIsOffWithTheSwitchOrAnotherMode() throws {
    for (environment, arguments) in [
      (["GITHUB_ACTIONS": "true", "TASKRUN_CI_GROUPS": "0"], [String]()),
      (["GITHUB_ACTIONS": "true", "TASKRUN_CI_GROUPS": "false"], []),
      (["GITLAB_CI": "true", "TASKRUN_CI_GROUPS": "no"], []),
      (["BUILDKITE": "true", "TASKRUN_CI_GROUPS": "OFF"], []),
      (["GITHUB_ACTIONS": "false"], []),
      (["GITHUB_ACTIONS": "0"], []),
      (["GITHUB_ACTIONS": "true"], ["--output", "stream"]),
      (["GITHUB_ACTIONS": "true"], ["-q"]),
      (["GITHUB_ACTIONS": ""], [])
    ] {
      let run = try run(Self.mixed, ["-j1"] + arguments, environment: environment)
      #expect(run.status == 1, "\(run.stdout)\(run.stderr)")
      #expect(
        !run.stdout.contains("::group::") && !run.stdout.contains("loud-line"),
        "\(environment) \(arguments): \(run.stdout)")
    }
  }

  @Test func aHostileNameCannotBreakTheMarkers() throws {
    let run = try run(
      """
      operation { name = "x::endgroup::", sh = "echo '::endgroup::'; echo '::error::no'" }
      operation { name = "::group::y", sh = "echo fine" }
      """, ["-j2"], environment: ["GITHUB_ACTIONS": "true"])
    #expect(run.status == 0, "\(run.stdout)\(run.stderr)")
    let commands = run.stdout.split(separator: "\n").filter { $0.hasPrefix("::") }
    #expect(commands.filter { $0 == "::endgroup::" }.count == 2, "\(run.stdout)")
    let titles = commands.filter { $0 != "::endgroup::" }
    #expect(titles.count == 2 && titles.allSatisfy { $0.hasPrefix("::group::") && !$0.dropFirst(9).contains("::") })
  }

  /// A hostile name and a multi-line Lua error, on each CI service (folding or not): no line
  /// taskrun prints starts, after its spaces, a workflow command or a heading made of them.
  @Test(arguments: ["GITHUB_ACTIONS", "GITLAB_CI", "BUILDKITE"])
  func outsideTextCannotIssueACommandOrAHeading(_ service: String) throws {
    for extra in [[:], ["TASKRUN_CI_GROUPS": "0"]] {
      let run = try run(
        """
        operation { name = "::warning title=x::pwned", sh = "exit 3" }
        operation { name = "lua", run = function() error("boom\\n::error::injected\\n--- heading\\n+++ open", 0) end }
        operation { name = "later", after = { "lua" }, sh = "true" }
        """, ["-j1", "-k"], environment: extra.merging([service: "true"]) { a, _ in a })
      #expect(run.status == 1, "\(run.stdout)\(run.stderr)")
      for line in (run.stdout + run.stderr).split(separator: "\n") {
        let trimmed = line.drop { $0 == " " || $0 == "\t" }
        #expect(
          !trimmed.hasPrefix("::warning") && !trimmed.hasPrefix("::error") && !line.hasPrefix("--- heading")
            && !line.hasPrefix("+++ open"), "\(service) \(extra): \(line)")
      }
      #expect(run.stderr.contains("    | ::error::injected"), "\(service): \(run.stderr)")
      #expect(run.stderr.contains("title=x:\u{200B}:pwned"), "\(service): \(run.stderr)")
    }
  }

  @Test func aBadModeOrAClashWithQuietOrVerboseIsAUsageError() throws {
    for (arguments, says) in [
      (["--output", "bogus"], "--output"), (["-v", "--output", "group"], "-v is --output prefixed"),
      (["-q", "--output", "keep-order"], "-q shows no command output")
    ] {
      let run = try run("operation { name = \"a\", sh = \"true\" }", arguments)
      #expect(run.status == 2, "\(arguments): \(run.stdout)\(run.stderr)")
      #expect(run.stderr.contains(says), "\(arguments): \(run.stderr)")
    }
  }

  @Test func noLineOfAFileNameOrAPrintCanStartALineOfItsOwn() throws {
    let dir = try Scratch.folder(
      "output-lines",
      [
        "taskrun.lua": """
        operation { name = "f", inputs = { "in/*" }, sh = "true" }
        operation { name = "d", run = function() print("line1\\n::warning::p2\\n--- head") end }
        """
      ])
    try FileManager.default.createDirectory(at: dir.appendingPathComponent("in"), withIntermediateDirectories: true)
    try "x".write(to: dir.appendingPathComponent("in/y\n::error::fromfile"), atomically: false, encoding: .utf8)
    for mode in ["stream", "group", "keep-order"] {
      let run = try Binary.start(
        ["--progress", "plain", "--output", mode], in: dir, environment: ["GITHUB_ACTIONS": "true"])
      let result = Binary.finish(run)
      #expect(result.status == 0, "\(result.stdout)\(result.stderr)")
      for line in (result.stdout + result.stderr).split(separator: "\n") {
        let start = line.drop { $0 == " " }
        // Streamed, a body's print is the script's own output, as `echo` in a CI step is.
        if mode == "stream" && (start == "::warning::p2" || start == "--- head") { continue }
        #expect(
          !(start.hasPrefix("::") && !start.hasPrefix("::group::") && !start.hasPrefix("::endgroup::"))
            && !start.hasPrefix("---"), "\(mode): \(line)")
      }
      try "y".write(to: dir.appendingPathComponent("in/y\n::error::fromfile"), atomically: false, encoding: .utf8)
    }
  }
}
