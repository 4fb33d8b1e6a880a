// Why: one line saying which part of a fingerprint changed ("input src/a.c changed", "command changed (-O2 → -O3)").

enum Why {
  /// The first difference between the last success's record and the parts now, in the order a
  /// user looks for it: what runs, then what upstream produced, then the other inputs.
  static func difference(
    before: OperationRecord, identity: [OperationRecord.Part], inputs: [FileRecord], discovered: [FileRecord],
    upstream: [OperationRecord.Upstream]
  ) -> String? {
    let old = Dictionary(before.identity.map { ($0.label, $0.text) }, uniquingKeysWith: { a, _ in a })
    let new = Dictionary(identity.map { ($0.label, $0.text) }, uniquingKeysWith: { a, _ in a })
    for part in identity where old[part.label] != part.text {
      guard let was = old[part.label] else { return "\(part.label) added (\(clip(part.text)))" }
      if part.label == "code" { return "its Lua function changed" }
      return "\(part.label) changed (\(change(was, part.text)))"
    }
    for part in before.identity where new[part.label] == nil {
      return "\(part.label) removed (was \(clip(part.text)))"
    }
    let oldUp = Dictionary(before.upstream.map { ($0.name, $0.outputs) }, uniquingKeysWith: { a, _ in a })
    for up in upstream {
      guard let was = oldUp[up.name] else { return "upstream '\(up.name)' is new" }
      if was == up.outputs { continue }
      let previous = Dictionary(was.map { ($0.path, $0.digest) }, uniquingKeysWith: { a, _ in a })
      if let changed = up.outputs.first(where: { previous[$0.path] != $0.digest }) {
        return "upstream '\(up.name)' produced a new \(changed.path)"
      }
      return "upstream '\(up.name)' produced fewer files"
    }
    let newUp = Set(upstream.map(\.name))
    if let gone = before.upstream.first(where: { !newUp.contains($0.name) }) {
      return "upstream '\(gone.name)' is no longer a dependency"
    }
    if let line = files(before.inputs, inputs, what: "input") { return line }
    if let line = files(before.discovered, discovered, what: "input") { return line + " (from its depfile)" }
    return nil
  }

  /// "input src/a.c changed", "input b.c added", "input c.c missing", "input d.c removed".
  private static func files(_ before: [FileRecord], _ now: [FileRecord], what: String) -> String? {
    let old = Dictionary(before.map { ($0.path, $0) }, uniquingKeysWith: { a, _ in a })
    for file in now {
      guard let was = old[file.path] else {
        return file.size < 0 ? "\(what) \(file.path) missing" : "\(what) \(file.path) added"
      }
      if file.size < 0 && was.size >= 0 { return "\(what) \(file.path) missing" }
      if was.digest != file.digest { return "\(what) \(file.path) changed" }
    }
    let paths = Set(now.map(\.path))
    if let gone = before.first(where: { !paths.contains($0.path) }) { return "\(what) \(gone.path) removed" }
    return nil
  }

  /// The words that differ: "-O2 → -O3" from two command lines.
  static func change(_ a: String, _ b: String) -> String {
    let x = a.split(separator: " ", omittingEmptySubsequences: false)
    let y = b.split(separator: " ", omittingEmptySubsequences: false)
    var start = 0
    while start < x.count && start < y.count && x[start] == y[start] { start += 1 }
    var endX = x.count, endY = y.count
    while endX > start && endY > start && x[endX - 1] == y[endY - 1] { (endX, endY) = (endX - 1, endY - 1) }
    let was = x[start..<endX].joined(separator: " "), now = y[start..<endY].joined(separator: " ")
    return "\(was.isEmpty ? "nothing" : clip(was)) → \(now.isEmpty ? "nothing" : clip(now))"
  }

  static func clip(_ text: String) -> String {
    let line = text.split(separator: "\n", omittingEmptySubsequences: false).first.map(String.init) ?? ""
    let clipped = line.count > 60 ? line.prefix(59) + "…" : line
    return clipped.count < text.count && !clipped.hasSuffix("…") ? clipped + "…" : String(clipped)
  }
}
