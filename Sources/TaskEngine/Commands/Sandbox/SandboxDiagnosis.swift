// SandboxDiagnosis: the one line that names the sandbox rule a failed command's errors point at.
import FoundationEssentials

extension Confinement {
  /// What a failed command's standard error says the sandbox denied, as one line naming the
  /// rule and how to widen it; nil when it says nothing the sandbox explains. The kernel does
  /// not say which rule denied what: the errors a denial gives (a read-only file system, a
  /// permission denied outside the readable folders, an unreachable network, a signal not
  /// permitted) are looked for in its last lines, with the path they name.
  public func explain(stderr bytes: [UInt8], grant: SandboxGrant?) -> String? {
    let text = String(decoding: bytes.suffix(16 << 10), as: UTF8.self)
    for line in text.split(separator: "\n").suffix(40).reversed() {
      if let note = explain(line: String(line), grant: grant) { return note }
    }
    return nil
  }

  /// (A command at the top level or at the REPL's prompt has no operation to widen: the
  /// hints say "its operation", where such a command would move.)
  func explain(line: String, grant: SandboxGrant?) -> String? {
    let lower = line.lowercased()
    let path = Self.lastPath(in: line)
    let network =
      lower.contains("network is unreachable") || lower.contains("could not resolve")
      || lower.contains("temporary failure in name resolution") || lower.contains("name or service not known")
      || (lower.contains("connect") && (lower.contains("permission denied") || lower.contains("refused")))
      || lower.contains("address family not supported")
      || (path.map { $0.hasPrefix("/dev/tcp/") || $0.hasPrefix("/dev/udp/") } ?? false)
    if network && !(grant?.network ?? false) {
      return "sandbox: commands have no network here; to allow it, give its operation "
        + "sandbox = { network = true } and run with --sandbox-allow network"
    }
    if lower.contains("read-only file system") || (lower.contains("permission denied") && path != nil) {
      guard let path else { return nil }
      let absolute = path.hasPrefix("/") ? Self.standardized(path) : nil
      let writable = writable(grant)
      if let absolute, writable.contains(where: { absolute == $0 || absolute.hasPrefix($0 + "/") }) { return nil }
      let where_ = writable.map { $0 == temporaryFolder ? "$TMPDIR" : $0 }.joined(separator: ", ")
      let folder = absolute.map(Self.parent) ?? "FOLDER"
      if lower.contains("read-only file system") {
        return "sandbox: commands may write only under \(where_); '\(path)' is outside: to allow it, "
          + "give its operation sandbox = { write = { \"\(folder)\" } } and run with --sandbox-allow write"
      }
      return "sandbox: commands may read only the system's folders, PATH's and \(where_)"
        + (grant?.read.isEmpty == false ? ", " + grant!.read.joined(separator: ", ") : "")
        + "; '\(path)' may be outside: to allow it, give its operation sandbox = { read = { \"\(absolute ?? path)\" } } "
        + "and run with --sandbox-allow read"
    }
    if (lower.contains("chmod") || lower.contains("changing permissions") || lower.contains("sysopen"))
      && lower.contains("operation not permitted")
    {
      return
        "sandbox: a root command may not make a file set-uid or set-gid (it would outlive the run as a way to root)"
    }
    if lower.contains("kill") && lower.contains("operation not permitted") {
      return "sandbox: a command may signal only the processes it started"
    }
    return nil
  }

  /// The last word of `line` that looks like a path ("/x", "./x"), quotes and a trailing
  /// colon taken off: the one an error names ("/bin/sh: 1: cannot create /x: …" names /x).
  static func lastPath(in line: String) -> String? {
    let quotes: Set<Character> = ["'", "\"", "`", "‘", "’", "“", "”"]
    for word in line.split(whereSeparator: { $0 == " " || $0 == "\t" }).reversed() {
      var token = word.drop(while: { quotes.contains($0) })
      while let last = token.last, quotes.contains(last) || last == ":" || last == "," { token = token.dropLast() }
      if token.hasPrefix("/") || token.hasPrefix("./") || token.hasPrefix("../") { return String(token) }
    }
    return nil
  }
}
