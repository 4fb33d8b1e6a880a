// A first word is a subcommand, a target of the script taskrun finds, or a script, by one documented rule.
import Foundation
import TestSupport
import Testing

@Suite struct CommandChoiceTests {
  /// A folder with `script` as taskrun.lua (nil: none) and a subfolder.
  func folder(_ script: String?) throws -> URL {
    let dir = Scratch.root.appendingPathComponent("taskrun-choice-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: dir.appendingPathComponent("sub"), withIntermediateDirectories: true)
    try script?.write(to: dir.appendingPathComponent("taskrun.lua"), atomically: true, encoding: .utf8)
    return dir
  }

  func exists(_ dir: URL, _ name: String) -> Bool {
    FileManager.default.fileExists(atPath: dir.appendingPathComponent(name).path)
  }

  /// Every subcommand's name is a target where the found script declares it, from its
  /// folder or below; `taskrun -- NAME` still reaches the subcommand.
  @Test func targetsOfTheFoundScriptWinOverSubcommands() throws {
    let names = ["test", "graph", "repl", "help"]
    let dir = try folder(
      names.map { #"operation { name = "\#($0)", sh = "touch ran-\#($0)" }"# }.joined(separator: "\n")
        + "\nprint('top level')\n")
    for name in names {
      let run = try Binary.run([name], in: dir.appendingPathComponent("sub"))
      #expect(run.status == 0 && exists(dir, "ran-\(name)"), "taskrun \(name): \(run.stdout)\(run.stderr)")
      #expect(run.stdout.components(separatedBy: "top level").count == 2, "the top level printed once: \(run.stdout)")
    }
    try names.forEach { try FileManager.default.removeItem(at: dir.appendingPathComponent("ran-\($0)")) }
    let graph = try Binary.run(["--", "graph"], in: dir)
    #expect(graph.status == 0 && graph.stdout.hasPrefix("digraph"), "\(graph.stdout)\(graph.stderr)")
    let test = try Binary.run(["--", "test"], in: dir)
    #expect(test.status == 2 && test.stderr.contains("no spec/ or tests/ folder"), "\(test.stderr)")
    let help = try Binary.run(["--", "help", "graph"], in: dir)
    #expect(help.status == 0 && help.stdout.contains("--format"), "\(help.stdout)")
    #expect(names.allSatisfy { !exists(dir, "ran-\($0)") }, "no target ran")
  }

  /// Where the found script has no such target, or there is no script, the subcommand runs
  /// (`scripts/test` runs `taskrun test -j4 spec` in a folder without one).
  @Test func subcommandsRunWhereTheScriptDoesNotDeclareThem() throws {
    for dir in [try folder(#"operation { name = "build", sh = "true" }"#), try folder(nil)] {
      let graph = try Binary.run(["graph", "-"], in: dir)
      #expect(graph.status == 0 && graph.stdout.hasPrefix("digraph"), "\(graph.stdout)\(graph.stderr)")
      let test = try Binary.run(["test"], in: dir)
      #expect(test.status == 2 && test.stderr.contains("no spec/ or tests/ folder"), "\(test.stderr)")
    }
    let broken = try Binary.run(["test"], in: try folder("operation {"))
    #expect(
      broken.status == 2 && broken.stderr.contains("taskrun.lua:1:") && broken.stderr.contains("taskrun -- test"),
      "which was meant is unknown: \(broken.stderr)")
  }

  /// Only `*.lua` files and files whose first line is `#!…taskrun` are scripts: another file
  /// named first is a target (or, with no script to find, an error), never parsed as Lua.
  @Test func onlyLuaFilesAndTaskrunShebangsAreScripts() throws {
    let dir = try folder(#"operation { name = "link", sh = "touch linked" }"#)
    try Data().write(to: dir.appendingPathComponent("link"))
    let link = try Binary.run(["link"], in: dir)
    #expect(link.status == 0 && exists(dir, "linked"), "the target, not the empty file: \(link.stdout)\(link.stderr)")
    let bare = try folder(nil)
    try Scratch.writeProgram("#!/bin/sh\ntouch configured\n", to: bare.appendingPathComponent("configure"))
    let configure = try Binary.run(["./configure"], in: bare)
    #expect(
      configure.status == 2 && configure.stderr.contains("'./configure' is not a taskrun script"), "\(configure.stderr)"
    )
    try Scratch.writeProgram(
      "#!/usr/bin/env taskrun\noperation { name = \"go\", sh = \"touch deployed\" }\n",
      to: bare.appendingPathComponent("deploy"))
    let deploy = try Binary.run(["deploy", "go"], in: bare)
    #expect(
      deploy.status == 0 && exists(bare, "deployed"), "a #!…taskrun file is a script: \(deploy.stdout)\(deploy.stderr)")
  }

  @Test func aReplScriptThatDoesNotLoadIsAUsageError() throws {
    let run = Binary.finish(
      try Binary.start(["repl", "missing.lua"], in: try folder(nil), input: "print('prompt reached')\n"))
    #expect(run.status == 2 && run.stderr.contains("taskrun: cannot read 'missing.lua': no such file"), "\(run.stderr)")
    #expect(!run.stdout.contains("prompt reached"), "\(run.stdout)")
  }
}
