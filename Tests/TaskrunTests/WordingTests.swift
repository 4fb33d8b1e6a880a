// What taskrun says where a fresh tester found it wrong: usage errors, Mermaid labels, the critical path after retries, the README's error example, os.exit in the REPL.
import Foundation
import TestSupport
import Testing

@Suite struct WordingTests {
  func folder(_ files: [String: String]) throws -> URL { try Scratch.folder("taskrun-wording", files) }

  /// A subcommand's usage error names the command a user types for its help.
  @Test(arguments: ["graph", "test"]) func aSubcommandsUsageErrorNamesTaskrun(_ subcommand: String) throws {
    let run = try Binary.run([subcommand, "--bogus"], in: try folder([:]))
    #expect(
      run.status == 2 && run.stderr.contains("taskrun: see 'taskrun \(subcommand) --help'"),
      "\(run.stderr)")
    #expect(!run.stderr.contains("See '\(subcommand) --help'"), "\(run.stderr)")
  }

  /// An unknown option gets a guess only when one is close.
  @Test func anUnknownOptionIsGuessedOnlyWhenClose() throws {
    let dir = try folder([:])
    for arguments in [["--bogus"], ["test", "--bogus"], ["graph", "--bogus"], ["--zzzzzz"]] {
      let run = try Binary.run(arguments, in: dir)
      #expect(
        run.status == 2 && run.stderr.contains("taskrun: unknown option '\(arguments.last!)'"),
        "\(arguments): \(run.stderr)")
      #expect(!run.stderr.lowercased().contains("did you mean"), "\(arguments): \(run.stderr)")
    }
    let close = try Binary.run(["--jbos", "2"], in: dir)
    #expect(
      close.status == 2 && close.stderr.contains("taskrun: unknown option '--jbos'; did you mean '--jobs'?"),
      "\(close.stderr)")
    let test = try Binary.run(["test", "--tagz", "x"], in: dir)
    #expect(test.stderr.contains("; did you mean '--tags'?"), "\(test.stderr)")
  }

  /// Mermaid reads label text as HTML: a command's `<b>`, `&`, quotes and `#…;` are shown
  /// as written.
  @Test func mermaidLabelsAreEscaped() throws {
    let dir = try folder(["w.lua": #"operation { name = "a<i>", sh = [[echo "a<b>&c" #lt;]] }"#])
    let run = try Binary.run(["graph", "w.lua", "--format", "mermaid"], in: dir)
    #expect(run.status == 0, "\(run.stderr)")
    #expect(run.stdout.contains(#"["a#lt;i#gt;<br>sh: echo #quot;a#lt;b#gt;#amp;c#quot; #35;lt;"]"#), "\(run.stdout)")
    #expect(!run.stdout.contains("<b>") && !run.stdout.contains("<i>") && !run.stdout.contains("&"), "\(run.stdout)")
  }

  /// A retried operation's step on the critical path is its time from its first attempt's
  /// start (failed attempts and the delays between them are part of the run's length).
  @Test func theCriticalPathCountsEveryAttempt() throws {
    let dir = try folder([
      "w.lua": """
      local tries = 0
      operation { name = "other", sh = "true" }
      operation { name = "flaky", retry = { max = 2, delay = 0.5 }, run = function()
        tries = tries + 1
        if tries < 3 then error("not yet") end
      end }
      """
    ])
    let run = try Binary.run(["w.lua"], in: dir)
    #expect(run.status == 0, "\(run.stdout)\(run.stderr)")
    let line = run.stdout.split(separator: "\n").first { $0.hasPrefix("Critical path: ") } ?? ""
    let seconds = line.firstMatch(of: /flaky \(([0-9.]+) s\)/).flatMap { Double($0.1) } ?? 0
    #expect(seconds >= 1.0, "two delays of 0.5 s: \(line)")
  }

  /// The README's example of an unknown field is what the binary says.
  @Test func theReadmesUnknownFieldExampleIsTheBinarysMessage() throws {
    let readme = try String(contentsOf: Binary.packageRoot.appendingPathComponent("README.md"), encoding: .utf8)
    let example = try #require(readme.split(separator: "\n").first { $0.contains("unknown field 'afer'") })
    let dir = try folder([
      "build.lua": String(repeating: "\n", count: 5) + "operation { name = \"build\", afer = {} }\n"
    ])
    let run = try Binary.run(["build.lua"], in: dir)
    #expect(run.status == 2 && run.stderr == example + "\n", "\(run.stderr)")
  }

  /// os.exit in the REPL ends it with that status, and its line prints no error.
  @Test func osExitInTheReplIsNoError() throws {
    let run = Binary.finish(
      try Binary.start(["repl"], in: try folder([:]), input: "print('before')\nos.exit(7)\nprint('after')\n"))
    #expect(
      run.status == 7 && run.stdout.contains("before") && !run.stdout.contains("after"), "\(run.stdout)\(run.stderr)")
    #expect(!run.stderr.contains("os.exit(7)\n") && !run.stderr.contains("stdin:"), "\(run.stderr)")
  }
}
