// CIFolding: the markers that fold a block of output in a CI service's log (GitHub Actions, GitLab CI, Buildkite).
import Glibc
import TaskEngine

/// A CI service whose log folds marked blocks, found from its variables: GITHUB_ACTIONS
/// (`::group::` … `::endgroup::`), GITLAB_CI (section_start … section_end, collapsed) or
/// BUILDKITE (`--- ` headings, which last until the next; `+++ ` opens one). Any non-empty
/// value but `false` and `0` counts; TASKRUN_CI_GROUPS `0`, `false`, `no` or `off` turns
/// folding (and `group` as the CI default) off.
/// A failure's block is never folded: it is printed as it is anywhere else (GitHub, GitLab),
/// or under a heading that opens it (Buildkite).
enum CIFolding: Equatable {
  case github, gitlab, buildkite

  static func detect(environment: (String) -> String? = Environment.variable) -> CIFolding? {
    let groups = environment("TASKRUN_CI_GROUPS")?.lowercased()
    if let groups, ["0", "false", "no", "off"].contains(groups) { return nil }
    return service(environment: environment)
  }

  /// The CI service taskrun runs on, folding or not (its log may read commands in any line:
  /// `PlainReporter.escapesNames`): a variable set, not empty, `false` or `0`.
  static func service(environment: (String) -> String? = Environment.variable) -> CIFolding? {
    func set(_ key: String) -> Bool {
      guard let value = environment(key) else { return false }
      return !value.isEmpty && value != "0" && value.lowercased() != "false"
    }
    if set("GITHUB_ACTIONS") { return .github }
    if set("GITLAB_CI") { return .gitlab }
    if set("BUILDKITE") { return .buildkite }
    return nil
  }

  /// A block's title or name as one safe line: control characters escaped (a newline in a
  /// name cannot end a marker early), and `::` broken up so GitHub reads no command in it.
  static func title(_ text: String) -> String {
    let line = TerminalText.escaped(text, keepingLines: false)
    return line.replacing("::", with: ":\u{200B}:")
  }

  /// The line that opens the fold of a block titled `title` (`number`: the block's count in
  /// the run, which keeps GitLab's section ids unique), or opens it unfolded (`failed`).
  func start(_ title: String, number: Int, failed: Bool, now: Int = Int(time(nil))) -> String? {
    let title = Self.title(title)
    switch self {
    case .github: return failed ? nil : "::group::" + title
    case .gitlab:
      guard !failed else { return nil }
      return "\u{1B}[0Ksection_start:\(now):\(Self.sectionID(number))[collapsed=true]\r\u{1B}[0K" + title
    case .buildkite: return (failed ? "+++ " : "--- ") + title
    }
  }

  /// The line that closes the fold `start` opened (none for Buildkite, whose headings last
  /// until the next).
  func end(number: Int, failed: Bool, now: Int = Int(time(nil))) -> String? {
    guard !failed else { return nil }
    switch self {
    case .github: return "::endgroup::"
    case .gitlab: return "\u{1B}[0Ksection_end:\(now):\(Self.sectionID(number))\r\u{1B}[0K"
    case .buildkite: return nil
    }
  }

  /// What ends the last fold before the run's summary: Buildkite's open heading, so the
  /// summary is under no block's (none elsewhere).
  var beforeSummary: String? { self == .buildkite ? "+++ taskrun summary" : nil }

  /// A GitLab section id: only [A-Za-z0-9_.-], unique by the block's number.
  static func sectionID(_ number: Int) -> String { "taskrun_block_\(number)" }
}
