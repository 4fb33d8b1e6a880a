// Text from a script is checked where the script gives it: names, labels and descriptions
// that would reach the terminal, progress patterns.
import Foundation
import Testing
import TestSupport

@Suite struct UntrustedValueTests {
  func run(_ script: String, _ arguments: [String] = ["-q"]) throws -> Run {
    let dir = Scratch.root.appendingPathComponent("taskrun-untrusted-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
    try script.write(to: dir.appendingPathComponent("w.lua"), atomically: true, encoding: .utf8)
    return try Binary.run(arguments + ["w.lua"], in: dir)
  }

  /// Each declaration is refused at its line with the text shown escaped, and no control
  /// character the script gave reaches the terminal.
  @Test func namesLabelsAndDescriptionsWithControlCharactersAreRefusedWhereGiven() throws {
    let cases: [(script: String, message: String)] = [
      (#"operation { name = "x\27[2J", sh = "true" }"#, #"w.lua:1: operation: field 'name' must not contain control characters (got "x\27[2J")"#),
      (#"group { name = "g\0" }"#, #"w.lua:1: group: field 'name' must not contain control characters (got "g\0")"#),
      (#"operation { name = "two\nlines" }"#, #"w.lua:1: operation: field 'name' must not contain control characters (got "two\nlines")"#),
      (#"operation { name = "rtl\u{202E}txt" }"#, #"w.lua:1: operation: field 'name' must not contain control characters (got "rtl\u{202E}txt")"#),
      (#"operation { name = "a", desc = "tab\there" }"#, #"w.lua:1: operation 'a': field 'desc' must not contain control characters (got "tab\there")"#),
      (#"queue { name = "q\27[1m" }"#, #"w.lua:1: queue: field 'name' must not contain control characters (got "q\27[1m")"#),
      (#"operation { name = "a", conditions = { mutex "m\27]0;title\7" } }"#,
       #"w.lua:1: bad argument #1 to 'mutex' (text without control characters expected, got "m\27]0;title\7")"#),
      (#"operation { name = "a", conditions = { resource("r\r", 2) } }"#,
       #"w.lua:1: bad argument #1 to 'resource' (text without control characters expected, got "r\r")"#),
      (#"operation { name = "a", observers = { activity "net\8\8" } }"#,
       #"w.lua:1: bad argument #1 to 'activity' (text without control characters expected, got "net\8\8")"#),
      (#"operation { name = "a", conditions = { condition { name = "c\27c" } } }"#,
       #"w.lua:1: condition: field 'name' must not contain control characters (got "c\27c")"#),
    ]
    for (script, message) in cases {
      let result = try run(script)
      #expect(result.status == 2, "\(script): \(result.stdout) \(result.stderr)")
      #expect(result.stderr.contains(message), "\(script): \(result.stderr)")
      for control in ["\u{1B}", "\u{0}", "\u{7}", "\u{8}", "\r", "\u{202E}"] {
        #expect(!(result.stdout + result.stderr).contains(control), "\(script): \((result.stdout + result.stderr).debugDescription)")
      }
    }
  }

  @Test func progressDescriptionsAndCancelReasonsWithControlCharactersFailTheBody() throws {
    let result = try run("""
      operation { name = "a", run = function() local p = progress { total = 2 } p.description = "wipe\\27[2J" end }
      operation { name = "b", run = function() local p = progress { kind = "file", file_url = "file:///x\\n" } end }
      operation { name = "c", run = function(op) op:cancel("stop\\27[2J") end }
      """, ["-q", "-k"])
    #expect(result.status == 1)
    #expect(result.stderr.contains(#"FAILED    a"#) && result.stderr.contains(#"w.lua:1: progress: 'description' must not contain control characters (got "wipe\27[2J")"#), "\(result.stderr)")
    #expect(result.stderr.contains(#"w.lua:2: progress: 'file_url' must not contain control characters (got "file:///x\n")"#), "\(result.stderr)")
    #expect(result.stderr.contains(#"w.lua:3: bad argument #1 to 'cancel' (text without control characters expected, got "stop\27[2J")"#), "\(result.stderr)")
    #expect(!result.stderr.contains("\u{1B}"))
  }

  /// busted's test names are free text: the operations that run them take them escaped.
  @Test func testNamesWithControlCharactersStillRun() throws {
    let dir = Scratch.root.appendingPathComponent("taskrun-untrusted-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: dir.appendingPathComponent("spec"), withIntermediateDirectories: true)
    try #"describe("tabs", function() it("a\tb", function() assert.is_true(true) end) end)"#
      .write(to: dir.appendingPathComponent("spec/t_spec.lua"), atomically: true, encoding: .utf8)
    let result = try Binary.run(["test"], in: dir)
    #expect(result.status == 0 && result.stdout.contains("1 passed"), "\(result.stdout) \(result.stderr)")
  }

  @Test func aBadProgressPatternIsAnErrorAtItsLine() throws {
    let cases: [(pattern: String, message: String)] = [
      (#"(%d+)%"#, #"field 'progress': malformed pattern (ends with '%') in "(%d+)%""#),
      (#"(%d+"#, #"field 'progress': unfinished capture in "(%d+""#),
      (#"%d+)"#, #"field 'progress': invalid pattern capture in "%d+)""#),
      (#"([%d+)"#, #"field 'progress': malformed pattern (missing ']') in "([%d+)""#),
      (#"(%d)%2"#, #"field 'progress': invalid capture index %2 in "(%d)%2""#),
      (#"(%d)%b"#, #"field 'progress': malformed pattern (missing arguments to '%b') in "(%d)%b""#),
      (#"(%d)%fx"#, #"field 'progress': missing '[' after '%f' in pattern in "(%d)%fx""#),
      (#"%d+"#, #"field 'progress' must capture a percentage, or completed and total: one or two captures (got 0 in "%d+")"#),
      (#"(%d)(%d)(%d)"#, #"(got 3 in "(%d)(%d)(%d)")"#),
      (String(repeating: "a?", count: 200) + "(%d)", "field 'progress': pattern too complex"),
    ]
    for (pattern, message) in cases {
      // The output never reaches the fault: Lua alone would not notice it, and the operation would succeed.
      let result = try run("""
        local pattern = [==[\(pattern)]==]
        operation { name = "build", sh = "echo 0", progress = pattern }
        """)
      #expect(result.status == 2, "\(pattern): \(result.stdout) \(result.stderr)")
      #expect(result.stderr.contains("w.lua:2: operation 'build': ") && result.stderr.contains(message), "\(pattern): \(result.stderr)")
    }
    let good = try run(#"operation { name = "build", sh = "echo 3/4; echo 50%", progress = "^(%d+)/(%d+)$" }"#)
    #expect(good.status == 0, "a well-formed pattern still works: \(good.stderr)")
  }
}
