// Dry runs are dry: -n, graph, --list and --list-names run no command and write no file, even from Lua's own library.
import Foundation
import TestSupport
import Testing

@Suite struct DryRunTests {
  static let modes: [[String]] = [["--progress", "plain", "-n"], ["graph"], ["--list"], ["--list-names"]]

  func folder(_ script: String) throws -> URL {
    let dir = Scratch.root.appendingPathComponent("taskrun-dryrun-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
    try script.write(to: dir.appendingPathComponent("d.lua"), atomically: true, encoding: .utf8)
    try "kept\n".write(to: dir.appendingPathComponent("keep.txt"), atomically: true, encoding: .utf8)
    return dir
  }

  func exists(_ dir: URL, _ name: String) -> Bool {
    FileManager.default.fileExists(atPath: dir.appendingPathComponent(name).path)
  }

  /// The example, then every other way Lua's library writes or runs something.
  @Test(arguments: modes)
  func nothingRunsOrWritesFromLuasLibrary(_ mode: [String]) throws {
    let dir = try folder(
      """
      os.execute("touch X") io.popen("touch Y"):close() io.open("Z", "w")
      print("popen", io.popen("cat > W", "w"):write("text"):close())
      print("append", io.open("keep.txt", "a"))
      print("update", io.open("keep.txt", "r+"))
      print("remove", os.remove("keep.txt"))
      print("rename", os.rename("keep.txt", "moved.txt"))
      print("output", pcall(function() io.output("V") end))
      print("tmpname", io.open(os.tmpname(), "w"))
      print("loadlib", package.loadlib("libc.so.6", "*"))
      print("binary", load(string.dump(function() end)))
      print("upvalues", debug.getupvalue, debug.sethook, debug.getregistry)
      print("read", io.open("keep.txt"):read("l"), io.lines("keep.txt")())
      print("tmpfile", io.tmpfile())
      operation { name = "a", sh = "touch RAN" }
      """)
    let run = Binary.finish(try Binary.start(mode + ["d.lua"], in: dir), timeout: 20)
    let all = run.stdout + run.stderr
    #expect(run.status == 0, "\(all)")
    for name in ["X", "Y", "Z", "W", "V", "moved.txt", "RAN"] {
      #expect(!exists(dir, name), "\(mode): \(name) was made:\n\(all)")
    }
    #expect((try? String(contentsOf: dir.appendingPathComponent("keep.txt"), encoding: .utf8)) == "kept\n", "\(mode)")
    for note in [
      "(dry run) os.execute: touch X", "(dry run) io.popen: touch Y", "(dry run) io.open: not writing 'Z'",
      "(dry run) io.popen: cat > W", "popen\ttrue\texit\t0",
      "append\tnil\t(dry run) io.open: not writing 'keep.txt'\t30",
      "update\tnil\t(dry run) io.open: not writing 'keep.txt'\t30",
      "remove\tnil\t(dry run) os.remove: not removing 'keep.txt'\t30",
      "rename\tnil\t(dry run) os.rename: not renaming 'keep.txt'\t30",
      "output\tfalse\td.lua:7: (dry run) io.output: not writing 'V'", "tmpname\tnil",
      "loadlib\tnil\t(dry run) C library 'libc.so.6' not loaded\topen",
      "binary\tnil\tattempt to load a binary chunk", "upvalues\tnil\tnil\tnil", "read\tkept\tkept",
      "tmpfile\tnil\t(dry run) io.tmpfile: not writing 'a temporary file'\t30"
    ] {
      #expect(all.contains(note), "\(mode): \(note)\n\(all)")
    }
  }

  @Test func aCModuleIsNotLoadedButALuaModuleIs() throws {
    let dir = try folder(
      """
      package.cpath = "./?.so"
      print("c", pcall(require, "native"))
      print("lua", require("helper"))
      operation { name = "a" }
      """)
    try "os.execute('touch FROM_MODULE') return 'helper loaded'\n"
      .write(to: dir.appendingPathComponent("helper.lua"), atomically: true, encoding: .utf8)
    try "not a library".write(to: dir.appendingPathComponent("native.so"), atomically: true, encoding: .utf8)
    let run = Binary.finish(try Binary.start(["--progress", "plain", "-n", "d.lua"], in: dir), timeout: 20)
    #expect(run.status == 0, "\(run.stdout)\(run.stderr)")
    #expect(run.stdout.contains("(dry run) C module 'native' not loaded"), "\(run.stdout)")
    #expect(
      run.stdout.contains("lua\thelper loaded") && run.stdout.contains("(dry run) os.execute: touch FROM_MODULE"),
      "\(run.stdout)")
    #expect(!exists(dir, "FROM_MODULE"))
  }

  /// The plan is what the script declared with every top-level command taken as a success
  /// with no output: when the graph came from such output, the plan says it may differ.
  @Test func aPlanBuiltFromCommandsOutputSaysSo() throws {
    let dir = try folder(
      """
      for f in sh("ls *.txt").stdout:gmatch("%S+") do operation { name = "compile " .. f } end
      operation { name = "link" }
      """)
    let run = Binary.finish(try Binary.start(["--progress", "plain", "-n", "d.lua"], in: dir), timeout: 20)
    #expect(run.status == 0, "\(run.stdout)\(run.stderr)")
    #expect(run.stdout.contains("Plan (1 operation, in execution order):"), "\(run.stdout)")
    #expect(
      run.stdout.contains(
        "taskrun: the script's top level used the result of 1 command (sh: ls *.txt), taken in this dry run as success with no output: a run may declare other operations"
      ), "\(run.stdout)")
    let plain = try folder("operation { name = \"a\" }\n")
    let quiet = Binary.finish(try Binary.start(["--progress", "plain", "-n", "d.lua"], in: plain), timeout: 20)
    #expect(!quiet.stdout.contains("may declare other operations"), "\(quiet.stdout)")
  }

  /// A dry load does not take standard input: what was piped is left to the run, and a
  /// top level that reads the terminal cannot stall shell completion (`--list-names`).
  @Test(arguments: modes)
  func standardInputReadsAsEmpty(_ mode: [String]) throws {
    let dir = try folder(
      """
      local line = io.read("l")
      local other = io.stdin:read("a")
      for l in io.lines() do other = other .. l end
      operation { name = "got_" .. tostring(line) .. "_" .. #other }
      """)
    let run = Binary.finish(try Binary.start(mode + ["d.lua"], in: dir, input: "secret\nmore\n"), timeout: 20)
    let all = run.stdout + run.stderr
    #expect(run.status == 0, "\(all)")
    #expect(all.contains("got_nil_0"), "\(mode): \(all)")
    #expect(!all.contains("secret"), "\(mode): \(all)")
  }

  /// `--events` and `--trace` with -n, --list or --list-names: no report file is opened, so an
  /// existing one keeps what it held (opening it for the run would have emptied it).
  @Test(arguments: [["-n"], ["--list"], ["--list-names"]])
  func reportFilesAreNotTouched(_ mode: [String]) throws {
    let dir = try folder("operation { name = \"a\", sh = \"touch RAN\" }\n")
    try "precious\n".write(to: dir.appendingPathComponent("ev.json"), atomically: true, encoding: .utf8)
    let run = Binary.finish(
      try Binary.start(mode + ["--events", "ev.json", "--trace", "tr.json", "d.lua"], in: dir), timeout: 20)
    #expect(run.status == 0, "\(run.stdout)\(run.stderr)")
    #expect(
      (try? String(contentsOf: dir.appendingPathComponent("ev.json"), encoding: .utf8)) == "precious\n", "\(mode)")
    #expect(!exists(dir, "tr.json") && !exists(dir, "RAN"), "\(mode)")
    #expect(
      (run.stdout + run.stderr).contains("--events and --trace are not written by a dry run or a listing"),
      "\(run.stdout)\(run.stderr)")
  }
}
