// Shell completion, through the real shells: bash's COMP_WORDS, zsh's compadd captured, fish's `complete -C`.
import Foundation
import TestSupport
import Testing

@testable import taskrun

@Suite struct CompletionTests {
  static func shell(_ name: String) -> String? {
    ["/usr/bin/\(name)", "/bin/\(name)"].first { FileManager.default.isExecutableFile(atPath: $0) }
  }

  /// A project: targets (one with a space), a script beside it, a plain file, a folder.
  static let project: URL = {
    let dir = Scratch.root.appendingPathComponent("taskrun-completion-\(UUID().uuidString)")
    try! FileManager.default.createDirectory(at: dir.appendingPathComponent("spec"), withIntermediateDirectories: true)
    try! """
    operation { name = "build", sh = "true" }
    operation { name = "compile main", sh = "true" }
    print("the top level prints")
    """.write(to: dir.appendingPathComponent("taskrun.lua"), atomically: true, encoding: .utf8)
    try! "operation { name = \"other\", sh = \"true\" }".write(
      to: dir.appendingPathComponent("more.lua"), atomically: true, encoding: .utf8)
    try! Data().write(to: dir.appendingPathComponent("notes.txt"))
    return dir
  }()

  /// The completion script of `shell`, in a file.
  static func script(_ shell: String) throws -> URL {
    let run = try Binary.run(["--generate-completion-script", shell])
    #expect(run.status == 0, "\(run.stderr)")
    let file = Scratch.root.appendingPathComponent("taskrun-completion-\(UUID().uuidString).\(shell)")
    try run.stdout.write(to: file, atomically: true, encoding: .utf8)
    return file
  }

  /// What `shell` offers for `line` (the cursor at its end), with taskrun on PATH; one
  /// candidate per line, plus `FILES` / `DIRS` / `LUA` where zsh is told to add files.
  static func complete(_ shell: String, _ line: String) throws -> Set<String> {
    let program = try #require(Self.shell(shell))
    let file = try script(shell)
    let code: String
    switch shell {
    case "bash":
      code = """
        source "$1"; read -ra w <<<"$2"; [[ "$2" == *" " ]] && w+=("")
        COMP_WORDS=("${w[@]}"); COMP_CWORD=$((${#w[@]} - 1)); _taskrun; printf '%s\\n' "${COMPREPLY[@]}"
        """
    case "zsh":
      code = """
        compdef() {}; _files() { case "$*" in '') print FILES;; '-/') print DIRS;; *) print LUA;; esac }
        compadd() { [[ $1 == -- ]] && shift; print -rl -- "$@" }
        source "$1"; words=(${(s: :)2}); [[ "$2" == *' ' ]] && words+=(''); CURRENT=${#words}; PREFIX=${words[CURRENT]}
        _taskrun
        """
    default:
      code = #"source $argv[1]; complete -C $argv[2] | string replace -r '\t.*' ''; true"#
    }
    let path =
      Binary.url.deletingLastPathComponent().path + ":"
      + (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin")
    let arguments = shell == "fish" ? ["-c", code, file.path, line] : ["-c", code, "_", file.path, line]
    let run = Binary.finish(
      try Binary.start(
        arguments, in: project, environment: ["PATH": path, "HOME": project.path],
        program: program))
    #expect(run.status == 0 && !run.stderr.contains("doubled rest argument"), "\(shell) '\(line)': \(run.stderr)")
    #expect(!run.stdout.contains("the top level prints"), "the script is read, not shown")
    return Set(run.stdout.split(separator: "\n").map { String($0).trimmingCharacters(in: .whitespaces) })
  }

  @Test(
    .enabled(if: shell("bash") != nil && shell("zsh") != nil && shell("fish") != nil),
    arguments: ["bash", "zsh", "fish"])
  func everyShellCompletesSubcommandsTargetsOptionsAndFiles(_ shell: String) throws {
    let files = shell == "zsh" ? "FILES" : "notes.txt"  // zsh: _files is asked for
    let dirs = shell == "zsh" ? "DIRS" : shell == "fish" ? "spec/" : "spec"
    let first = try Self.complete(shell, "taskrun ")
    #expect(first.isSuperset(of: ["repl", "test", "graph", "help", "build", "compile main"]), "\(shell): \(first)")
    #expect(first.contains(shell == "zsh" ? "LUA" : "more.lua") && !first.contains("notes.txt"), "scripts: \(first)")
    let space = try Self.complete(shell, "taskrun comp")
    #expect(space.contains("compile main") && !space.contains("build"), "a target with a space: \(space)")
    let later = try Self.complete(shell, "taskrun more.lua ")
    #expect(
      later.contains("other") && !later.contains("build") && !later.contains("test"),
      "the named script's targets: \(later)")
    for option in ["-f", "--events", "--trace"] {
      #expect(try Self.complete(shell, "taskrun \(option) ").contains(files), "\(shell) \(option) completes files")
    }
    #expect(try Self.complete(shell, "taskrun -C ").contains(dirs), "-C completes folders")
    #expect(try Self.complete(shell, "taskrun --progress ") == ["auto", "tty", "plain", "none"])
    let options = try Self.complete(shell, "taskrun --")
    #expect(options.isSuperset(of: ["--keep-going", "--events", "--trace", "--executor", "--list"]), "\(options)")
    #expect(try Self.complete(shell, "taskrun --output-") == ["--output-limit", "--output-file-limit"])
    let test = try Self.complete(shell, "taskrun test ")
    #expect(
      test.contains(files) && !test.contains("build") && !test.contains("compile main"),
      "test takes spec roots: \(test)")
    #expect(try Self.complete(shell, "taskrun test --ex").isSuperset(of: ["--exclude-pattern", "--exclude-tags"]))
    #expect(try Self.complete(shell, "taskrun graph --format ") == ["dot", "mermaid", "json"])
    #expect(try Self.complete(shell, "taskrun runs ").isSuperset(of: ["show", "diff"]))
    #expect(try Self.complete(shell, "taskrun runs --").isSuperset(of: ["--json", "--limit"]))
    #expect(try Self.complete(shell, "taskrun report -").contains("-o"))
    #expect(
      try Self.complete(shell, "taskrun help ") == [
        "repl", "test", "graph", "status", "watch", "cancel", "pause", "resume", "why", "history", "runs", "report"
      ])
  }

  /// Every option the help shows is offered (the lists in Completer cannot drift).
  @Test func everyOptionOfTheHelpIsCompleted() throws {
    for command in ["", "test", "graph", "repl"] {
      let help = try Binary.run(command.isEmpty ? ["--help"] : ["help", command])
      let shown = Set(
        help.stdout.split(separator: "\n").flatMap { line -> [String] in
          guard line.hasPrefix("  -") else { return [] }  // an option's line, not a wrapped description
          let text = line.trimmingCharacters(in: .whitespaces)
          return text.split(separator: " ").first!.split(separator: ",").flatMap { $0.split(separator: "/") }.map(
            String.init)
        })
      let words = (command.isEmpty ? ["--complete", "--", "-"] : ["--complete", "--", "--", command, "-"])
      let offered = Set(try Binary.run(words, in: Scratch.root).stdout.split(separator: "\n").map(String.init))
      #expect(
        !shown.isEmpty && shown.subtracting(offered).isEmpty, "\(command): not offered \(shown.subtracting(offered))")
    }
  }

  /// What a shell completes after each run option is what the option's declaration says
  /// its value is, and every option but the hidden one is offered where options are.
  @Test func eachRunOptionIsCompletedAsDeclared() throws {
    let options = Set(
      try Binary.run(["--complete", "--", "-"], in: Scratch.root).stdout.split(separator: "\n").map(String.init))
    for option in RunOption.allCases {
      let declaration = option.declaration
      for spelling in declaration.spellings {
        #expect(options.contains(spelling) == !declaration.text.isEmpty, "\(spelling) offered: \(options)")
        let expected: [String]
        switch declaration.value {
        case .flag: continue  // a flag's next word is a script or a target
        case .number, .word: expected = ["none"]
        case .file: expected = ["files"]
        case .folder: expected = ["dirs"]
        case .choice(let type, _): expected = ["none"] + type.words
        }
        let answer = try Binary.run(["--complete", "--", spelling, ""], in: Scratch.root).stdout
        #expect(answer.split(separator: "\n").map(String.init) == expected, "after \(spelling)")
      }
    }
    #expect(options.isSuperset(of: ["-j", "--progress", "-C", "-f", "--output-file-limit", "-k", "--version", "-h"]))
  }
}
