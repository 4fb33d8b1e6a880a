// OutputMode: how commands' output is shown when operations run in parallel (--output), and its default.
import ArgumentParser
import TaskEngine

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

  /// How much the line reporter prints in this mode (`quiet`: -q or --progress none).
  func verbosity(quiet: Bool) -> PlainReporter.Verbosity {
    quiet || self == .errors ? .quiet : self == .prefixed ? .verbose : .normal
  }

  /// The sink that stands before the line reporter `lines` in this mode (group, keep-order,
  /// errors); nil where the reporter does it alone (stream, prefixed), so that the default
  /// costs nothing. `limitMB`: --output-limit, what a block holds at most.
  func sink(before lines: PlainReporter, ci: CIFolding?, limitMB: Int?) -> EventSink? {
    switch self {
    case .stream, .prefixed: return nil
    case .group, .keepOrder:
      return OutputBlocks(
        lines: lines, keepOrder: self == .keepOrder, ci: ci, limit: (limitMB ?? OutputLimits().memory >> 20) << 20)
    case .errors: return RootFailures(lines: lines)
    }
  }

  /// Why `-q` or `-v` cannot go with it, or nil.
  func conflict(quiet: Bool, verbose: Bool) -> String? {
    if verbose && self != .prefixed { return "-v is --output prefixed: it cannot be used with --output \(rawValue)" }
    if quiet && self != .stream && self != .errors {
      return "-q shows no command output: it cannot be used with --output \(rawValue) (only stream or errors)"
    }
    return nil
  }
}
