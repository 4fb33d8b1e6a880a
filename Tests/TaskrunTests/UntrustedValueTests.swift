// Text and numbers from a script are checked where the script gives them: names that would
// reach the terminal, progress patterns, numbers that are NaN, infinite or out of range.
import Foundation
import TestSupport
import Testing

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
      (
        #"operation { name = "x\27[2J", sh = "true" }"#,
        #"w.lua:1: operation: field 'name' must not contain control characters (got "x\27[2J")"#
      ),
      (#"group { name = "g\0" }"#, #"w.lua:1: group: field 'name' must not contain control characters (got "g\0")"#),
      (
        #"operation { name = "two\nlines" }"#,
        #"w.lua:1: operation: field 'name' must not contain control characters (got "two\nlines")"#
      ),
      (
        #"operation { name = "rtl\u{202E}txt" }"#,
        #"w.lua:1: operation: field 'name' must not contain control characters (got "rtl\u{202E}txt")"#
      ),
      (
        #"operation { name = "a", desc = "tab\there" }"#,
        #"w.lua:1: operation 'a': field 'desc' must not contain control characters (got "tab\there")"#
      ),
      (
        #"queue { name = "q\27[1m" }"#,
        #"w.lua:1: queue: field 'name' must not contain control characters (got "q\27[1m")"#
      ),
      (
        #"operation { name = "a", conditions = { mutex "m\27]0;title\7" } }"#,
        #"w.lua:1: bad argument #1 to 'mutex' (text without control characters expected, got "m\27]0;title\7")"#
      ),
      (
        #"operation { name = "a", conditions = { resource("r\r", 2) } }"#,
        #"w.lua:1: bad argument #1 to 'resource' (text without control characters expected, got "r\r")"#
      ),
      (
        #"operation { name = "a", observers = { activity "net\8\8" } }"#,
        #"w.lua:1: bad argument #1 to 'activity' (text without control characters expected, got "net\8\8")"#
      ),
      (
        #"operation { name = "a", conditions = { condition { name = "c\27c" } } }"#,
        #"w.lua:1: condition: field 'name' must not contain control characters (got "c\27c")"#
      ),
      (
        #"operation { name = "a", after = { "b", "x\27[2J" } }"#,
        #"w.lua:1: operation 'a': field 'after' must not contain control characters (got "x\27[2J")"#
      )
    ]
    for (script, message) in cases {
      let result = try run(script)
      #expect(result.status == 2, "\(script): \(result.stdout) \(result.stderr)")
      #expect(result.stderr.contains(message), "\(script): \(result.stderr)")
      for control in ["\u{1B}", "\u{0}", "\u{7}", "\u{8}", "\r", "\u{202E}"] {
        #expect(
          !(result.stdout + result.stderr).contains(control),
          "\(script): \((result.stdout + result.stderr).debugDescription)")
      }
    }
  }

  @Test func progressDescriptionsAndCancelReasonsWithControlCharactersFailTheBody() throws {
    let result = try run(
      """
      operation { name = "a", run = function() local p = progress { total = 2 } p.description = "wipe\\27[2J" end }
      operation { name = "b", run = function() local p = progress { kind = "file", file_url = "file:///x\\n" } end }
      operation { name = "c", run = function(op) op:cancel("stop\\27[2J") end }
      """, ["-q", "-k"])
    #expect(result.status == 1)
    #expect(
      result.stderr.contains(#"FAILED    a"#)
        && result.stderr.contains(
          #"w.lua:1: progress: 'description' must not contain control characters (got "wipe\27[2J")"#),
      "\(result.stderr)")
    #expect(
      result.stderr.contains(#"w.lua:2: progress: 'file_url' must not contain control characters (got "file:///x\n")"#),
      "\(result.stderr)")
    #expect(
      result.stderr.contains(
        #"w.lua:3: bad argument #1 to 'cancel' (text without control characters expected, got "stop\27[2J")"#),
      "\(result.stderr)")
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
      (
        #"%d+"#,
        #"field 'progress' must capture a percentage, or completed and total: one or two captures (got 0 in "%d+")"#
      ),
      (#"(%d)(%d)(%d)"#, #"(got 3 in "(%d)(%d)(%d)")"#),
      (String(repeating: "a?", count: 200) + "(%d)", "field 'progress': pattern too complex")
    ]
    for (pattern, message) in cases {
      // The output never reaches the fault: Lua alone would not notice it, and the operation would succeed.
      let result = try run(
        """
        local pattern = [==[\(pattern)]==]
        operation { name = "build", sh = "echo 0", progress = pattern }
        """)
      #expect(result.status == 2, "\(pattern): \(result.stdout) \(result.stderr)")
      #expect(
        result.stderr.contains("w.lua:2: operation 'build': ") && result.stderr.contains(message),
        "\(pattern): \(result.stderr)")
    }
    let good = try run(#"operation { name = "build", sh = "echo 3/4; echo 50%", progress = "^(%d+)/(%d+)$" }"#)
    #expect(good.status == 0, "a well-formed pattern still works: \(good.stderr)")
  }

  @Test func nonFiniteNumbersNeverReachACommand() throws {
    for value in ["0/0", "1/0", "-1/0", "-(0/0)"] {
      let declared = try run(#"operation { name = "a", sh = { "echo", \#(value) } }"#)
      #expect(declared.status == 2, "\(value): \(declared.stdout)")
      #expect(
        declared.stderr.range(
          of: #"w.lua:1: operation 'a': field 'sh': argv element #2 must be a finite number \(got -?(nan|inf)\)"#,
          options: .regularExpression) != nil, "\(value): \(declared.stderr)")
      let called = try run(
        #"operation { name = "a", run = function() sh({ "echo", "x" }, { env = { N = \#(value) } }) end }"#)
      #expect(
        called.status == 1 && called.stderr.contains("w.lua:1: sh options: env value 'N' must be a finite number"),
        "\(value): \(called.stderr)")
    }
    let fine = try run(#"operation { name = "a", sh = { "echo", 2^10, 0.5, -0.0 } }"#, ["-v"])
    #expect(
      fine.status == 0 && fine.stdout.contains("[a] 1024.0 0.5 -0.0"),
      "finite numbers as tostring writes them: \(fine.stdout)")
  }

  @Test func progressCountsSayTheirRange() throws {
    let limit = try run(
      """
      operation { name = "a", run = function()
        local p = progress { total = 2^53 }
        assert(p.total == 2^53)
        p.completed = 2^53
        p.total = -2^53
      end }
      operation { name = "b", run = function() progress { total = 2^53 + 2 } end }
      operation { name = "c", run = function() local p = progress { total = 4 } p.completed = math.maxinteger end }
      operation { name = "d", run = function() local p = progress { total = 4, kind = "file" } p.throughput = 0/0 end }
      operation { name = "e", run = function() local p = progress { total = 4, kind = "file" } p.eta = -1 end }
      """, ["-q", "-k"])
    #expect(result(limit, "a") == nil, "2^53 is in range: \(limit.stderr)")
    #expect(
      result(limit, "b")?.contains(
        "w.lua:7: progress: field 'total' must be a whole number from -2^53 to 2^53 (got 9.007199254740994e+15)")
        == true, "\(limit.stderr)")
    #expect(
      result(limit, "c")?.contains(
        "w.lua:8: progress: 'completed' must be a whole number from -2^53 to 2^53 (got 9.223372036854776e+18)") == true,
      "\(limit.stderr)")
    #expect(
      result(limit, "d")?.contains("w.lua:9: progress: 'throughput' must be a finite number (got nan)") == true,
      "\(limit.stderr)")
    #expect(
      result(limit, "e")?.contains("w.lua:10: progress: 'eta' must be 0 or more (got -1)") == true, "\(limit.stderr)")
  }

  /// The FAILED line of `name`, or nil if it did not fail.
  func result(_ run: Run, _ name: String) -> String? {
    run.stderr.split(separator: "\n").first { $0.hasPrefix("FAILED    \(name) ") }.map(String.init)
  }
}
