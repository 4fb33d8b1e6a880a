// Commands from Lua with a NUL byte, or an env name with '=' or none, are refused with file:line.
import Foundation
import Testing

/// The kernel takes C strings and `NAME=value` pairs: a NUL cut a word short, and a name with
/// `=` set another variable, silently. Every part of a command is refused instead, in
/// operation{} specs, in bodies and at the top level.
@Suite struct CommandTextTests {
  @Test func nulBytesAndBadEnvironmentNamesAreRefusedWithTheirPlace() throws {
    let run = try ScriptRun.run(
      #"""
      local cases = {
        function() operation{name='a', sh={"printf","%s|","a\0b","c"}} end,
        function() operation{name='b', sh="echo a\0b"} end,
        function() operation{name='c', sh="env", env={["A=B"]="x"}} end,
        function() operation{name='d', sh="env", env={["B\0C"]="y"}} end,
        function() operation{name='e', sh="env", env={[""]="y"}} end,
        function() operation{name='f', sh="env", env={B="y\0z"}} end,
        function() operation{name='g', sh="pwd", cwd="/tmp\0/etc"} end,
        function() sh("echo a\0b") end,
        function() sh({"echo","a\0b"}) end,
        function() sh("env", {env={["A=B"]="x"}}) end,
      }
      for i, f in ipairs(cases) do print(i, select(2, pcall(f))) end
      operation{name='body', run=function() sh({"printf", "%s|", "a\0b", "c"}) end}
      """#, ["-k"])
    let expected = [
      #"w.lua:2: operation 'a': field 'sh': argv element #3 must not contain a NUL byte (got "a\0b")"#,
      #"w.lua:3: operation 'b': field 'sh': the command must not contain a NUL byte (got "echo a\0b")"#,
      #"w.lua:4: operation 'c': field 'env': environment variable name "A=B" must not contain '='"#,
      #"w.lua:5: operation 'd': field 'env': environment variable name must not contain a NUL byte (got "B\0C")"#,
      #"w.lua:6: operation 'e': field 'env': an environment variable name must not be empty"#,
      #"w.lua:7: operation 'f': env value 'B' must not contain a NUL byte (got "y\0z")"#,
      #"w.lua:8: operation 'g': field 'cwd' must not contain a NUL byte (got "/tmp\0/etc")"#,
      #"w.lua:9: bad argument #1 to 'sh': the command must not contain a NUL byte (got "echo a\0b")"#,
      #"w.lua:10: bad argument #1 to 'sh': argv element #2 must not contain a NUL byte (got "a\0b")"#,
      #"w.lua:11: sh options: field 'env': environment variable name "A=B" must not contain '='"#
    ]
    for (i, line) in expected.enumerated() {
      #expect(run.stdout.contains("\(i + 1)\t\(line)"), "case \(i + 1): \(run.stdout)")
    }
    // In a body: the operation fails with the place, and nothing ran (it printed `a|c|`).
    #expect(run.status == 1, "\(run.stdout)\(run.stderr)")
    #expect(
      run.stderr.contains("w.lua:14: bad argument #1 to 'sh': argv element #3 must not contain a NUL byte"),
      "\(run.stderr)")
    #expect(!run.stdout.contains("a|c|"), "\(run.stdout)")
  }

  @Test func atTheTopLevelTheLoadFailsWithThePlace() throws {
    let run = try ScriptRun.run(#"sh("echo a\0b")"#)
    #expect(run.status == 2, "\(run.stdout)\(run.stderr)")
    #expect(
      run.stderr.contains(
        #"w.lua:1: bad argument #1 to 'sh': the command must not contain a NUL byte (got "echo a\0b")"#),
      "\(run.stderr)")
  }
}
