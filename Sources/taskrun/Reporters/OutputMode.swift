// OutputMode: how commands' output is shown when operations run in parallel (--output), and its default.
import ArgumentParser

/// `--output`: `stream` shows no command output but a failure's (the default); `prefixed`
/// every line as it comes, as `[name] line` (`-v`); `group` each finished operation's output
/// as one block; `keep-order` the blocks in declaration order; `errors` only the output of
/// the operations that failed by themselves, and a line per failure for what it stopped.
enum OutputMode: String, ExpressibleByArgument, CaseIterable, ChoiceArgument {
  case stream, prefixed, group
  case keepOrder = "keep-order"
  case errors

  /// The mode of a run: `--output`, else `-v`'s (prefixed), else `group` on a CI service that
  /// folds blocks (`CIFolding`, not with -q), else `stream`.
  static func chosen(option: OutputMode?, verbose: Bool, quiet: Bool, ci: CIFolding?) -> OutputMode {
    if let option { return option }
    if verbose { return .prefixed }
    return ci != nil && !quiet ? .group : .stream
  }

  /// Whether it shows output as blocks (one per finished operation).
  var groupsOutput: Bool { self == .group || self == .keepOrder }

  /// Why `-q` or `-v` cannot go with it, or nil.
  func conflict(quiet: Bool, verbose: Bool) -> String? {
    if verbose && self != .prefixed { return "-v is --output prefixed: it cannot be used with --output \(rawValue)" }
    if quiet && self != .stream && self != .errors {
      return "-q shows no command output: it cannot be used with --output \(rawValue) (only stream or errors)"
    }
    return nil
  }
}
