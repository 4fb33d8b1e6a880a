// EngineError: graph mistakes a user can make, each with a message that says how to fix it.

/// A mistake in the graph: the message is meant for the user as it is.
public struct EngineError: Error, CustomStringConvertible, Equatable {
  public enum Kind: Sendable { case duplicateName, unknownName, cycle, alreadyStarted, invalid }
  public let kind: Kind
  public let description: String
  /// Where the script gave what is wrong (`file:line:`), when that is not where it was found
  /// wrong: a name in `after` is resolved when the run starts.
  public let place: String?

  public init(_ kind: Kind, _ description: String, place: String? = nil) {
    self.kind = kind
    self.description = description
    self.place = place
  }

  /// The message after its place, or after `script` when it has none.
  public func located(in script: String) -> String {
    place.map { "\($0) \(description)" } ?? "\(script): \(description)"
  }
}

/// "did you mean 'build'?" for a misspelt name, or "" when nothing is close.
public func suggestion(for name: String, among candidates: [String]) -> String {
  let scored = candidates.map { ($0, editDistance(name.lowercased(), $0.lowercased())) }
  let limit = max(2, name.count / 3)
  let close = scored.filter { $0.1 <= limit || $0.0.lowercased().hasPrefix(name.lowercased()) }
    .sorted { $0.1 != $1.1 ? $0.1 < $1.1 : $0.0 < $1.0 }
    .prefix(3).map { "'\($0.0)'" }
  if close.isEmpty { return "" }
  return close.count == 1 ? "did you mean \(close[0])?" : "did you mean one of \(close.joined(separator: ", "))?"
}

/// Levenshtein distance between two strings.
func editDistance(_ a: String, _ b: String) -> Int {
  let a = Array(a), b = Array(b)
  if a.isEmpty { return b.count }
  var previous = Array(0...b.count)
  for i in 1...a.count {
    var current = [i] + Array(repeating: 0, count: b.count)
    for j in 1...max(1, b.count) where !b.isEmpty {
      current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1))
    }
    previous = b.isEmpty ? [i] : current
  }
  return previous[b.count]
}
