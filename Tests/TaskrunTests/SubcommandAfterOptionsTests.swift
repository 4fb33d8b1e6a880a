// `taskrun [OPTIONS] [--] SUBCOMMAND`: the subcommand, with the options it takes; usage errors in taskrun's words.
import Foundation
import TestSupport
import Testing

@Suite struct SubcommandAfterOptionsTests {
  /// A folder whose taskrun.lua declares `top`, with `w1/taskrun.lua` declaring `inner` and
  /// `w2/taskrun.lua` declaring a target `graph`; each operation touches a file named after it.
  func folder() throws -> URL {
    let dir = Scratch.root.appendingPathComponent("taskrun-after-options-\(UUID().uuidString)")
    let scripts = ["taskrun.lua": "top", "w1/taskrun.lua": "inner", "w2/taskrun.lua": "graph"]
    for (path, name) in scripts {
      let url = dir.appendingPathComponent(path)
      try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
      try #"operation { name = "\#(name)", sh = "touch ran-\#(name)" }"#.write(
        to: url, atomically: true, encoding: .utf8)
    }
    return dir
  }

  func ran(_ dir: URL) -> [String] {
    ["ran-top", "w1/ran-inner", "w2/ran-graph"].filter {
      FileManager.default.fileExists(atPath: dir.appendingPathComponent($0).path)
    }
  }

  /// Options before the subcommand's name, with or without `--`, are the subcommand's own;
  /// its options after it work the same; nothing runs.
  @Test func theSubcommandAfterOptionsIsTheSubcommand() throws {
    let dir = try folder()
    for arguments in [
      ["-C", "w1", "--", "graph"], ["-C", "w1", "graph"], ["-f", "w1/taskrun.lua", "graph"], ["graph", "-C", "w1"],
      ["graph", "-f", "w1/taskrun.lua"], ["-C", "w1", "graph", "--format", "json"]
    ] {
      let run = try Binary.run(arguments, in: dir)
      #expect(run.status == 0 && run.stdout.contains("inner") && !run.stdout.contains("top"), "\(arguments): \(run)")
    }
    for arguments in [["--no-color", "--", "test"], ["-j4", "test"], ["-C", "w1", "-v", "test"]] {
      let run = try Binary.run(arguments, in: dir)
      #expect(run.status == 2 && run.stderr.contains("no spec/ or tests/ folder"), "\(arguments): \(run.stderr)")
    }
    let repl = Binary.finish(try Binary.start(["-C", "w1", "repl", "-f", "taskrun.lua"], in: dir, input: ":ops\n"))
    #expect(repl.status == 0 && repl.stdout.contains("inner"), "\(repl)")
    let empty = Binary.finish(try Binary.start(["-C", "w1", "repl"], in: dir, input: ":ops\n"))
    #expect(empty.status == 0 && !empty.stdout.contains("inner") && !empty.stderr.contains("target"), "\(empty)")
    #expect(ran(dir).isEmpty, "nothing ran: \(ran(dir))")
  }

  /// An option the subcommand does not take is a usage error that names it: not a run, not
  /// an unknown target.
  @Test func anOptionTheSubcommandDoesNotTakeIsNamed() throws {
    let dir = try folder()
    for (arguments, option) in [
      (["--no-color", "--", "graph"], "--no-color"), (["-n", "--", "graph"], "-n"), (["-q", "graph"], "-q"),
      (["-f", "taskrun.lua", "test"], "-f"), (["-k", "help"], "-k")
    ] {
      let run = try Binary.run(arguments, in: dir)
      let name = arguments.first { ["graph", "test", "help"].contains($0) }!
      let help = name == "help" ? "taskrun --help" : "taskrun \(name) --help"
      #expect(
        run.status == 2 && run.stderr.hasPrefix("taskrun: 'taskrun \(name)' does not take \(option)")
          && run.stderr.contains("taskrun: see '\(help)'"), "\(arguments): \(run.stderr)")
    }
    #expect(ran(dir).isEmpty, "nothing ran: \(ran(dir))")
  }

  /// After options as first, a subcommand's name is a target of the script that declares it
  /// (the one `-C` or `-f` leads to); `--` still forces the subcommand.
  @Test func aTargetOfThatNameStillWinsAfterOptions() throws {
    let dir = try folder()
    let target = try Binary.run(["-q", "-C", "w2", "graph"], in: dir)
    #expect(target.status == 0 && ran(dir) == ["w2/ran-graph"], "\(target)")
    let forced = try Binary.run(["-C", "w2", "--", "graph"], in: dir)
    #expect(forced.status == 0 && forced.stdout.hasPrefix("digraph"), "\(forced)")
    #expect(ran(dir) == ["w2/ran-graph"])
  }

  /// make's `-kj4` is `-k -j 4`; a bad value is named as typed; a negative number gets the
  /// range; every line reads as taskrun's own (`taskrun: ` and a lower-case word).
  @Test func usageErrorsNameWhatWasTypedInTaskrunsWords() throws {
    let dir = try folder()
    let combined = try Binary.run(["-kj2", "top"], in: dir)
    #expect(combined.status == 0 && ran(dir) == ["ran-top"], "\(combined)")
    let alone = try Binary.run(["-q", "-kj2"], in: dir)
    #expect(alone.status == 0, "\(alone)")
    for (arguments, message) in [
      (["-kjx", "top"], "taskrun: the value 'x' is invalid for '-j <jobs>'"),
      (["-jx", "top"], "taskrun: the value 'x' is invalid for '-j <jobs>'"),
      (["--output-limit", "-1"], "taskrun: --output-limit must be from 1 to 65536 MB (got -1)"),
      (["--memory", "-5"], "taskrun: --memory must be from 1 to 1048576 MB (got -5)"),
      (["-j"], "taskrun: missing value for '-j <jobs>'"),
      (["--jbos", "2"], "taskrun: unknown option '--jbos'; did you mean '--jobs'?"),
      (["graph", "--bogus"], "taskrun: unknown option '--bogus'"),
      (
        ["--progress", "x"],
        "taskrun: the value 'x' is invalid for '--progress <progress>'; please provide one of 'auto', 'tty', 'plain' or 'none'"
      )
    ] {
      let run = try Binary.run(arguments, in: dir)
      let lines = run.stderr.split(separator: "\n")
      #expect(run.status == 2 && lines.first.map(String.init) == message, "\(arguments): \(run.stderr)")
      #expect(
        lines.allSatisfy { $0.hasPrefix("taskrun: ") && $0.dropFirst(9).first.map { !$0.isUppercase } == true },
        "\(arguments): \(run.stderr)")
    }
  }

  /// `taskrun help graph` and `help repl`: the usage line names every option listed below it.
  @Test(arguments: ["graph", "repl"])
  func theUsageLineNamesEveryOption(_ name: String) throws {
    let help = try Binary.run(["help", name])
    let usage = help.stdout.split(separator: "\n").first { $0.hasPrefix("USAGE:") }.map(String.init) ?? ""
    let options = help.stdout.split(separator: "\n").compactMap { line -> String? in
      let words = line.split(separator: " ")
      guard let first = words.first, line.hasPrefix("  "), first.hasPrefix("-") else { return nil }
      return String(first.hasSuffix(",") ? words.dropFirst().first ?? first : first)
    }.filter { !["--help", "--version", "-h"].contains($0) }
    #expect(!options.isEmpty, "\(help.stdout)")
    for option in options {
      let spellings = [option] + (option == "--jobs" ? ["-j"] : [])
      #expect(spellings.contains { usage.contains($0) }, "\(option) in \(usage)")
    }
  }
}
