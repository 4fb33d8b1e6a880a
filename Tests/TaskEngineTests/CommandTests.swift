// Commands: direct exec versus the shell, and real processes through the runner.
import Foundation
import Testing
@testable import TaskEngine

@Suite struct CommandSpecTests {
  @Test func plainCommandsRunDirectlyLikeMake() {
    #expect(CommandSpec(.shell("cc -c a.c -o a.o")).argv == ["cc", "-c", "a.c", "-o", "a.o"])
  }

  @Test(arguments: ["echo a | wc", "ls *.c", "echo $HOME", "a && b", "X=1 make", "echo 'q'", "cd dir", "exit 3"])
  func shellSyntaxGoesThroughBinSh(_ line: String) {
    #expect(CommandSpec(.shell(line)).argv == ["/bin/sh", "-c", line])
  }

  @Test func argvIsNeverReinterpreted() {
    #expect(CommandSpec(.argv(["echo", "$HOME | x"])).argv == ["echo", "$HOME | x"])
  }

  @Test func displayQuotesArgvForAShellAndShortensScripts() {
    #expect(CommandSpec(.argv(["echo", "it's here", "plain"])).display == #"echo 'it'\''s here' plain"#)
    #expect(CommandSpec(.shell("set -e\nmake\nmake install")).display == "set -e …")
  }

  /// Reports print durations without Foundation's formatter; they read as printf's would.
  @Test func durationsReadAsPrintfWouldPrintThem() {
    // 10,000 values from 0 to 1000 s, each 0.03 ms past a tenth of a millisecond: never an exact
    // tie, where printf (the exact binary value) and decimal rounding may differ.
    for k in stride(from: 0, to: 10_000_000, by: 997) {
      let value = Double(k) / 1e4 + 0.00003
      for digits in 0...3 { #expect(formatFixed(value, digits) == String(format: "%.\(digits)f", value)) }
    }
    #expect(formatFixed(0, 2) == "0.00" && formatFixed(-0.004, 2) == "0.00" && formatFixed(-1.5, 1) == "-1.5")
    #expect(formatFixed(.infinity, 2) == "inf" && formatFixed(0.999, 2) == "1.00" && formatFixed(59.96, 1) == "60.0")
    #expect(formatSeconds(1.5) == "1.50 s" && formatSeconds(2) == "2 s" && formatSeconds(125) == "2 min 5 s")
  }
}
