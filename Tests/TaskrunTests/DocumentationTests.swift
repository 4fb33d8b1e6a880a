// The user docs say what the binary does: the man page lists every option, the guide's events example has every field.
import Foundation
import TestSupport
import Testing

@testable import taskrun

@Suite struct DocumentationTests {
  func text(_ path: String) throws -> String {
    try String(contentsOf: Binary.packageRoot.appendingPathComponent(path), encoding: .utf8)
  }

  /// Every long option of `taskrun --help` is in the man page (`--executor` was not).
  @Test func theManPageListsEveryOptionOfTheHelp() throws {
    let help = try Binary.run(["--help"])
    let options = help.stdout.split(separator: "\n").compactMap { line -> String? in
      guard line.hasPrefix("  -") else { return nil }
      return line.split(separator: " ").first { $0.hasPrefix("--") }.map {
        String($0.prefix { $0 != "," && $0 != "/" })
      }
    }
    let page = try text("docs/taskrun.1").replacingOccurrences(of: "\\-", with: "-")
    #expect(options.count > 15, "\(help.stdout)")
    for option in options { #expect(page.contains(option), "docs/taskrun.1 lacks \(option)") }
  }

  /// Every subcommand is in the man page, and the contract's synopsis and `--` line.
  @Test func theManPageAndTheContractNameEverySubcommand() throws {
    let page = try text("docs/taskrun.1")
    let contract = try text("docs/lua-contract.md")
    let synopsis = contract.split(separator: "\n").filter { $0.hasPrefix("taskrun ") }.joined(separator: "\n")
    for name in CommandChoice.subcommands {
      #expect(
        page.contains(".B \(name)\n") || page.contains(".BR \(name) ") || page.contains("\" \(name) \"")
          || page.contains("\" \(name)\n") || name == "help",
        "docs/taskrun.1 does not describe \(name)")
      #expect(
        page.contains("\\fB\(name)\\fR|") || page.contains("|\\fB\(name)\\fR"), "docs/taskrun.1's -- line lacks \(name)"
      )
      #expect(
        synopsis.contains("taskrun \(name) ") || synopsis.contains("|\(name) ") || synopsis.contains("\(name)|"),
        "docs/lua-contract.md's synopsis lacks \(name)")
    }
    let separator = CommandChoice.subcommands.joined(separator: "|")
    #expect(contract.contains("taskrun [OPTIONS] -- \(separator) ..."), "the contract's -- line")
  }

  /// The guide's example of `--events` (docs/guide.md, moved there from the README) has, for
  /// each line, exactly the fields the binary writes for that event of the same run.
  @Test func theGuidesEventsExampleHasEveryField() throws {
    let guide = try text("docs/guide.md")
    let example = guide.split(separator: "\n").filter { $0.hasPrefix(#"{"time":"#) }
    #expect(example.count >= 4)
    let dir = Scratch.root.appendingPathComponent("taskrun-docs-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
    try """
    operation { name = "fetch", sh = "sleep 0.05" }
    operation { name = "build", after = { "fetch" }, sh = "true" }
    """.write(to: dir.appendingPathComponent("taskrun.lua"), atomically: true, encoding: .utf8)
    let run = try Binary.run(["-q", "--events", "e.json"], in: dir)
    #expect(run.status == 0, "\(run.stderr)")
    func objects<S: StringProtocol>(_ lines: [S]) throws -> [[String: Any]] {
      try lines.map { try JSONSerialization.jsonObject(with: Data($0.utf8)) as! [String: Any] }
    }
    let written = try objects(
      try String(contentsOf: dir.appendingPathComponent("e.json"), encoding: .utf8)
        .split(separator: "\n"))
    for shown in try objects(example) {
      let same = written.first {
        $0["event"] as? String == shown["event"] as? String
          && $0["operation"] as? String == shown["operation"] as? String
      }
      #expect(same.map { Set($0.keys) } == Set(shown.keys), "docs/guide.md's \(shown) vs the binary's \(same ?? [:])")
    }
  }
}
