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
    (["--jobs", "0", "-k"], ["--jobs=0", "-k"]),
    (["-j", "2"], ["-j", "2"]),
    (["-jx"], ["-jx"]),
    (["-j"], ["-j"]),
    (["-j0"], ["--jobs=0"])
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

  @Test func nothingOnATerminalIsTheRepl() {
    #expect(Invocation([], interactive: true) == Invocation(["--", "repl"], interactive: false))
    #expect(Invocation([], interactive: false).words == [])
    #expect(Invocation(["--", "x"], interactive: true).words == ["repl"])
  }
}
