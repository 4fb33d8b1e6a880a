// The run command's parse without reflection answers only where swift-argument-parser agrees.
import ArgumentParser
import Foundation
import TestSupport
import Testing

@testable import taskrun

@Suite struct RunOptionsTests {
  /// What a user may type, well and badly: every spelling of every option, values good and
  /// bad, words, and things only swift-argument-parser answers (help, combined flags).
  static let vocabulary = [
    "-j", "--jobs", "--jobs=3", "--jobs=0", "-k", "--keep-going", "-n", "--dry-run", "-q",
    "--quiet", "-v", "--verbose", "--progress", "--progress=none", "--progress=tty",
    "--progress=bogus", "--yes", "--no-color", "--events", "--events=-", "--events=", "--trace",
    "--trace=t.json", "--memory", "--memory=0", "--memory=64", "--output-limit",
    "--output-limit=70000", "--output-file-limit", "--output-file-limit=0",
    "--output-file-limit=2048", "-f", "-C", "--executor", "--executor=slurm", "-l", "--list",
    "--list-names", "-kq", "-nk", "-h", "--help", "--version", "-x", "--bogus", "--yes=1",
    "-j=2", "--list-names="
  ]
  static let values = [
    "2", "0", "-1", "+3", "08", " 5", "abc", "9999999999999999999999", "none", "tty", "plain",
    "auto", "local", "slurm", "-", "build.lua", "test", "a=b", "", "é", "dir/x.lua", "graph"
  ]

  @Test func whereverItAnswersSwiftArgumentParserAnswersTheSame() throws {
    var rng = SplitMix64.seeded(by: "TASKRUN_OPTIONS_SEED", for: "RunOptionsTests")
    let rounds = ProcessInfo.processInfo.environment["TASKRUN_OPTIONS_ROUNDS"].flatMap(Int.init) ?? 1_500
    var answered = 0, tried = 0
    for _ in 0..<rounds {
      let arguments = (0..<rng.int(0...6)).map { _ in
        rng.chance(0.55) ? rng.pick(Self.vocabulary) : rng.pick(Self.values)
      }
      guard Taskrun.command(for: arguments.first) == RunCommand.self else { continue }  // a subcommand
      tried += 1
      guard let quick = RunOptions.parse(arguments) else { continue }
      answered += 1
      let parsed: RunCommand
      do {
        parsed = try #require(try RunCommand.parseAsRoot(arguments) as? RunCommand, "\(arguments)")
      } catch {
        Issue.record(
          "\(arguments): the quick parse answered \(quick), swift-argument-parser: \(RunCommand.message(for: error))")
        return
      }
      #expect(parsed.options == quick, "\(arguments)")
      if parsed.options != quick { return }
    }
    // Most plain command lines take the quick way; the rest still had to be compared.
    #expect(answered > tried / 10 && answered < tried, "\(answered) of \(tried) answered")
  }

  /// Both parsers take their spellings from `RunOption`'s declarations: every spelling the
  /// help shows (hidden ones too) must be one the quick parse knows, or it would be dropped.
  @Test func theQuickParseKnowsEveryOptionTheHelpShows() throws {
    let help = RunCommand.helpMessage(includeHidden: true, columns: 1_000)
    let options = help.split(separator: "\n").filter { $0.hasPrefix("  -") }.flatMap { line in
      line.split(separator: " ").map { $0.trimmingCharacters(in: CharacterSet(charactersIn: ",")) }
        .prefix { $0.hasPrefix("-") }
    }
    let shown = Set(options).subtracting(["-h", "--help", "--version"])
    #expect(shown.count > 20, "\(help)")
    let known = Set(RunOption.spellings.map(\.spelling))
    #expect(known.count == RunOption.spellings.count, "a spelling is listed twice")
    #expect(shown == known, "\(shown.symmetricDifference(known))")
  }

  @Test(arguments: [
    (["build.lua", "test", "-j", "4", "-k"], RunOptions(jobs: 4, keepGoing: true, words: ["build.lua", "test"])),
    (["--progress=none", "-f", "w.lua", "-C", "dir"], RunOptions(progress: .none, file: "w.lua", directory: "dir")),
    (["--events", "-", "-", "--executor", "local"], RunOptions(events: "-", executor: .local, words: ["-"])),
    (["--output-file-limit", "2048", "--output-limit=8"], RunOptions(outputLimit: 8, outputFileLimit: 2048)),
    ([], RunOptions())
  ])
  func plainCommandLines(_ arguments: [String], _ expected: RunOptions) {
    #expect(RunOptions.parse(arguments) == expected)
  }

  @Test(arguments: [
    ["-h"], ["--version"], ["-kq"], ["-j", "0"], ["-q", "-v"], ["-j"], ["-f", "-k"],
    ["--progress", "bogus"], ["-k", "-k"], ["--yes=1"], ["--memory", "0"],
    ["--output-file-limit", "0"], ["--output-file-limit", "1048577"]
  ])
  func everythingElseGoesToSwiftArgumentParser(_ arguments: [String]) {
    #expect(RunOptions.parse(arguments) == nil)
  }

  /// What only swift-argument-parser answers (combined flags, an option given twice) lands
  /// in the same value, read through the options' declarations: every option once.
  @Test(arguments: [
    (["-kq", "-j", "3", "x.lua", "t"], RunOptions(jobs: 3, keepGoing: true, quiet: true, words: ["x.lua", "t"])),
    (
      ["-k", "-k", "--progress", "tty", "--executor=slurm", "-v"],
      RunOptions(keepGoing: true, verbose: true, progress: .tty, executor: .slurm)
    ),
    (
      ["--memory", "5", "--memory", "7", "-nl", "--list-names", "-C", "d"],
      RunOptions(dryRun: true, memory: 7, directory: "d", list: true, listNames: true)
    ),
    (
      [
        "--yes", "--yes", "--no-color", "--sandbox", "--events", "e.json", "--trace=t.json", "-f", "w.lua",
        "--output-limit", "8", "--output-file-limit=9", "--progress", "none", "--executor", "local"
      ],
      RunOptions(
        progress: .none, yes: true, noColor: true, events: "e.json", trace: "t.json", sandbox: .commands,
        outputLimit: 8, outputFileLimit: 9, file: "w.lua", executor: .local)
    )
  ])
  func swiftArgumentParsersAnswerLandsInTheSameOptions(_ arguments: [String], _ expected: RunOptions) throws {
    #expect(RunOptions.parse(arguments) == nil, "the quick parse answered")
    let parsed = try #require(try RunCommand.parseAsRoot(arguments) as? RunCommand)
    #expect(parsed.options == expected)
  }

  /// swift-argument-parser is shown every option once, in the help's order.
  @Test func theHelpOrderHasEveryOptionOnce() {
    #expect(RunOption.helpOrder.sorted { $0.rawValue < $1.rawValue } == RunOption.allCases)
  }

  /// The help shows each option with its declaration's spellings, value name and text (a
  /// hidden one only where hidden options are shown).
  @Test func theHelpIsTheDeclarations() {
    /// The options' lines: names, then the text (on the next line after long names).
    func entries(_ help: String) -> [String: String] {
      var found: [String: String] = [:], last: String?
      for line in help.split(separator: "\n").map(String.init) {
        if line.hasPrefix("  -") {
          let parts = line.dropFirst(2).components(separatedBy: "  ")
          last = parts[0]
          found[parts[0]] = parts.dropFirst().joined().trimmingCharacters(in: .whitespaces)
        } else if let name = last, found[name] == "" {
          found[name] = line.trimmingCharacters(in: .whitespaces)
        } else {
          last = nil
        }
      }
      return found
    }
    let shown = entries(RunCommand.helpMessage(columns: 10_000))
    let all = entries(RunCommand.helpMessage(includeHidden: true, columns: 10_000))
    for option in RunOption.allCases {
      let declaration = option.declaration
      var names = declaration.spellings.joined(separator: ", ")
      if option.takesValue { names += " <\(declaration.valueName ?? String(declaration.long!.dropFirst(2)))>" }
      #expect(all[names] != nil, "\(names) in \(all)")
      #expect((shown[names] != nil) == !declaration.text.isEmpty, "\(names)")
      if !declaration.text.isEmpty {
        #expect(shown[names]?.hasPrefix(declaration.text) == true, "\(names): \(shown[names] ?? "")")
      }
    }
  }
}
