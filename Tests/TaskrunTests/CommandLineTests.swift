// Finding and listing work as make, just and go-task users expect: --version, help, the
// default script, -f, -C, '-', --list, executable scripts, `...` (completions: CompletionTests).
import Foundation
import TestSupport
import Testing

@Suite struct CommandLineTests {
  /// A project: taskrun.lua at the top, a subfolder to run from.
  func project(_ script: String = Self.script) throws -> URL {
    let dir = Scratch.root.appendingPathComponent("taskrun-cli-\(UUID().uuidString)")
    try FileManager.default.createDirectory(
      at: dir.appendingPathComponent("sub/deeper"), withIntermediateDirectories: true)
    try script.write(to: dir.appendingPathComponent("taskrun.lua"), atomically: true, encoding: .utf8)
    return dir
  }

  static let script = """
    operation { name = "build", desc = "Compile everything", sh = "pwd > built-in" }
    operation { name = "test", desc = "Run the tests", after = { "build" }, sh = "true" }
    operation { name = "clean", sh = "true" }
    print("top level says", select("#", ...), ...)
    """

  @Test func versionAndHelp() throws {
    let version = try Binary.run(["--version"])
    #expect(
      version.status == 0
        && version.stdout.range(of: #"^taskrun \d+\.\d+\.\d+ \(Lua 5\.4\.\d+\)\n$"#, options: .regularExpression)
          != nil,
      "\(version.stdout)")
    let help = try Binary.run(["help"])
    #expect(help.status == 0 && help.stdout.contains("SUBCOMMANDS:"), "\(help.stdout)")
    for example in ["taskrun repl build.lua", "taskrun test -o TAP spec", "taskrun graph build.lua | dot -Tsvg"] {
      #expect(help.stdout.contains(example), "one example per subcommand: \(example)")
    }
    let test = try Binary.run(["help", "test"])
    #expect(test.status == 0 && test.stdout.contains("--exclude-pattern"), "help SUBCOMMAND is that subcommand's help")
    let none = try Binary.run(["help", "nosuch"])
    #expect(
      none.status == 2
        && none.stderr.contains(
          "no subcommand 'nosuch' (repl, test, graph, status, watch, cancel, pause, resume, why, history, runs, report, help)"
        ),
      "\(none.stderr)")
    let bad = try Binary.run(["--badopt"])
    #expect(bad.status == 2 && bad.stderr.contains("taskrun: unknown option '--badopt'"), "\(bad.stderr)")
  }

  @Test func theDefaultScriptIsFoundFromASubfolderAndRunsInItsFolder() throws {
    let dir = try project()
    let run = Binary.finish(try Binary.start(["-q", "build"], in: dir.appendingPathComponent("sub/deeper")))
    #expect(run.status == 0, "\(run.stdout)\(run.stderr)")
    let built = try String(contentsOf: dir.appendingPathComponent("built-in"), encoding: .utf8)
    #expect(
      URL(fileURLWithPath: built.trimmingCharacters(in: .newlines)).resolvingSymlinksInPath().path
        == dir.resolvingSymlinksInPath().path, "it ran in the script's folder")
    try FileManager.default.moveItem(
      at: dir.appendingPathComponent("taskrun.lua"), to: dir.appendingPathComponent("workflow.lua"))
    #expect(
      Binary.finish(try Binary.start(["-q", "clean"], in: dir.appendingPathComponent("sub"))).status == 0,
      "workflow.lua too")
    let empty = Scratch.root.appendingPathComponent("taskrun-none-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: empty, withIntermediateDirectories: true)
    let none = Binary.finish(try Binary.start(["build"], in: empty, environment: ["HOME": empty.path]))
    #expect(
      none.status == 2 && none.stderr.contains("no taskrun.lua or workflow.lua here or in a parent folder"),
      "\(none.stderr)")
  }

  @Test func fileDirectoryAndStandardInput() throws {
    let dir = try project()
    try "operation { name = \"other\", sh = \"true\" }".write(
      to: dir.appendingPathComponent("sub/other.txt"), atomically: true, encoding: .utf8)
    let file = try Binary.run(["-q", "-f", "sub/other.txt"], in: dir)
    #expect(file.status == 0 && file.stdout.contains("1 succeeded"), "-f names any file: \(file.stdout)\(file.stderr)")
    let folder = try Binary.run(["-q", "-C", dir.path, "clean"], in: Scratch.root)
    #expect(folder.status == 0 && folder.stdout.contains("top level says"), "\(folder.stdout)\(folder.stderr)")
    let stdin = Binary.finish(
      try Binary.start(
        ["-q", "-", "--", "x", "y"], in: dir,
        input: "print('from stdin', ...); operation { name = 'piped', sh = 'true' }"))
    #expect(stdin.status == 0 && stdin.stdout.contains("from stdin\tx\ty\n"), "\(stdin.stdout)\(stdin.stderr)")
  }

  @Test func listShowsTheOperationsWithTheirDescriptionsAndRunsNothing() throws {
    let dir = try project()
    let list = try Binary.run(["--list"], in: dir)
    #expect(list.status == 0)
    #expect(
      list.stdout == "Operations in taskrun.lua:\n  build  Compile everything\n  test   Run the tests\n  clean\n",
      "\(list.stdout)")
    #expect(list.stderr.contains("top level says"), "what the script prints goes to stderr")
    #expect(!FileManager.default.fileExists(atPath: dir.appendingPathComponent("built-in").path), "nothing ran")
    let names = try Binary.run(["--list-names"], in: dir.appendingPathComponent("sub"))
    #expect(names.stdout == "build\ntest\nclean\n", "for completion: \(names.stdout)")
    let bad = try Binary.run(["-l"], in: try project(#"operation { name = "x", desc = 42, sh = "true" }"#))
    #expect(bad.status == 2 && bad.stderr.contains("field 'desc' must be a string"), "\(bad.stderr)")
  }

  @Test func argumentsReachTheMainChunksDotsAndArg() throws {
    let dir = try project()
    let run = try Binary.run(["-q", "taskrun.lua", "clean", "--", "one", "two"], in: dir)
    #expect(run.stdout.contains("top level says\t2\tone\ttwo\n"), "\(run.stdout)")
  }

  @Test func anExecutableScriptRunsThroughItsShebang() throws {
    let dir = try project()
    let script = dir.appendingPathComponent("hello.lua")
    try Scratch.writeProgram(
      "#!/usr/bin/env taskrun\noperation { name = \"hello\", run = function() print(\"hello from \" .. arg[0]) end }\n",
      to: script)
    let path =
      Binary.url.deletingLastPathComponent().path + ":"
      + (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin")
    let run = Binary.finish(try Binary.start([], in: dir, environment: ["PATH": path], program: script.path))
    #expect(run.status == 0 && run.stdout.contains("hello from \(script.path)"), "\(run.stdout)\(run.stderr)")
  }

  /// What a run reads of its surroundings at start: -j defaults to the processors it may run
  /// on (taskset narrows them, as nproc counts them); line editing (libedit, opened by the
  /// REPL) is not loaded, nor Foundation beyond FoundationEssentials (this test binary is
  /// linked dynamically, so its libraries show in /proc/self/maps).
  @Test func aRunDefaultsToTheProcessorsItMayUseAndLoadsNoLineEditing() throws {
    let dir = try project(
      """
      local maps = io.open("/proc/self/maps"):read("a")
      print("jobs " .. main_queue.max_concurrent .. ", libedit " .. tostring(maps:find("libedit") ~= nil))
      io.stderr:write("Foundation ", tostring(maps:find("libFoundation.so", 1, true) ~= nil), "\\n")
      """)
    let cpus = sysconf(Int32(_SC_NPROCESSORS_ONLN))
    var cases = [("0", 1)]
    if cpus >= 2 { cases.append(("0,1", 2)) }
    for (list, jobs) in cases {
      let run = Binary.finish(
        try Binary.start(["-c", list, Binary.url.path, "-q"], in: dir, program: "/usr/bin/taskset"))
      #expect(
        run.status == 0 && run.stdout.hasPrefix("jobs \(jobs), libedit false\n"),
        "taskset -c \(list): \(run.stdout)\(run.stderr)")
      #expect(run.stderr.contains("Foundation false"), "\(run.stderr)")
    }
    let nproc = Binary.finish(try Binary.start([], in: dir, program: "/usr/bin/nproc"))
    let plain = try Binary.run(["-q"], in: dir)
    #expect(
      plain.stdout.hasPrefix("jobs \(nproc.stdout.trimmingCharacters(in: .whitespacesAndNewlines)), libedit false\n"),
      "\(plain.stdout)\(plain.stderr)")
  }
}
