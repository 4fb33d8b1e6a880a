// The command line's rewrite before either parser: the script's arguments, make's -j4, a forced subcommand.
import Testing

@testable import taskrun

@Suite struct InvocationTests {
  @Test func wordsAfterTheFirstSeparatorAreTheScripts() {
    let invocation = Invocation(["-k", "build.lua", "--", "-j4", "--", "x"], interactive: false)
    #expect(invocation.words == ["-k", "build.lua"])
    #expect(invocation.scriptArguments == ["-j4", "--", "x"])
    #expect(!invocation.subcommandForced)
  }

  @Test(arguments: [
    (["-j4", "t"], ["-j", "4", "t"]),
    (["-j", "-1"], ["--jobs=-1"]),
    (["--jobs", "0", "-k"], ["--jobs", "0", "-k"]),
    (["-j", "2"], ["-j", "2"]),
    (["-jx"], ["-j", "x"]),
    (["-j"], ["-j"]),
    (["-j0"], ["-j", "0"]),
    (["-j-3"], ["--jobs=-3"]),
    (["-kj4", "a"], ["-k", "-j", "4", "a"]),
    (["-kqj"], ["-k", "-q", "-j"]),
    (["-Cj", "x"], ["-Cj", "x"]),
    (["--output-limit", "-1"], ["--output-limit=-1"]),
    (["--events", "-1"], ["--events", "-1"])
  ])
  func makesJobCountIsOneOption(_ arguments: [String], _ words: [String]) {
    #expect(Invocation(arguments, interactive: false).words == words)
  }

  @Test func aSeparatorBeforeASubcommandForcesIt() {
    let test = Invocation(["--", "test", "-j2", "--", "a"], interactive: false)
    #expect(test.words == ["test", "-j", "2"] && test.scriptArguments == ["a"] && test.subcommandForced)
    let target = Invocation(["--", "build"], interactive: false)
    #expect(target.words == [] && target.scriptArguments == ["build"] && !target.subcommandForced)
  }

  @Test func optionsBeforeASubcommandAreItsOwn() throws {
    let forced = Invocation(["-C", "w1", "--", "graph", "a", "--", "x"], interactive: false)
    #expect(forced.subcommandForced && forced.subcommand == "graph" && forced.scriptArguments == ["x"])
    #expect(try forced.subcommandWords() == ["graph", "-C", "w1", "a"])
    #expect(forced.leadingPlace.directory == "w1" && forced.leadingPlace.file == nil)
    let named = Invocation(["-j4", "-f", "x.lua", "repl"], interactive: false)
    #expect(!named.subcommandForced && named.subcommand == "repl" && named.leadingPlace.file == "x.lua")
    #expect(try named.subcommandWords() == ["repl", "-j", "4", "-f", "x.lua"])
    #expect(throws: Invocation.OptionNotTaken(subcommand: "graph", option: "--no-color")) {
      try Invocation(["--no-color", "--", "graph"], interactive: false).subcommandWords()
    }
    #expect(throws: Invocation.OptionNotTaken(subcommand: "test", option: "-f")) {
      try Invocation(["-f", "x.lua", "test"], interactive: false).subcommandWords()
    }
    #expect(Invocation(["build.lua", "graph"], interactive: false).subcommand == nil, "a target after a script")
    #expect(Invocation(["build.lua", "--", "graph"], interactive: false).scriptArguments == ["graph"])
  }

  @Test func nothingOnATerminalIsTheReplOnlyWithoutAScript() {
    #expect(
      Invocation([], interactive: true, scriptFound: { false }) == Invocation(["--", "repl"], interactive: false))
    #expect(Invocation([], interactive: true, scriptFound: { true }).words == [])
    #expect(Invocation([], interactive: false, scriptFound: { false }).words == [])
    #expect(Invocation(["--", "x"], interactive: true, scriptFound: { false }).words == ["repl"])
    #expect(Invocation(["--", "x"], interactive: true, scriptFound: { true }).words == [])
  }
}
