// SandboxGrant: what one operation asks `--sandbox` for beyond what every command gets.
import FoundationEssentials

/// An operation's widening of the sandbox (`sandbox = { read =, write =, network = }`):
/// folders or files it may also read, also write, and whether it may use the network.
/// Paths are absolute (the Lua side makes them so); the command line decides which kinds
/// are honoured (`--sandbox-allow`). A reference: it rides on every command spec and every
/// start event, where an absent one must cost one word, not two arrays and a flag.
public final class SandboxGrant: Sendable, Hashable {
  public let read: [String]
  public let write: [String]
  public let network: Bool

  public init(read: [String] = [], write: [String] = [], network: Bool = false) {
    (self.read, self.write, self.network) = (read, write, network)
  }

  /// Nothing beyond the defaults.
  public static let none = SandboxGrant()

  public static func == (a: SandboxGrant, b: SandboxGrant) -> Bool {
    a === b || (a.read == b.read && a.write == b.write && a.network == b.network)
  }

  public func hash(into hasher: inout Hasher) {
    hasher.combine(read)
    hasher.combine(write)
    hasher.combine(network)
  }

  public var isEmpty: Bool { read.isEmpty && write.isEmpty && !network }

  /// The kinds it asks for, as `--sandbox-allow` names them.
  public var kinds: [SandboxGrant.Kind] {
    (read.isEmpty ? [] : [.read]) + (write.isEmpty ? [] : [.write]) + (network ? [.network] : [])
  }

  /// What `--sandbox-allow` may allow.
  public enum Kind: String, Sendable, CaseIterable {
    case read, write, network
  }

  /// "network, write /a/out" : one line for listings and messages.
  public var summary: String {
    var parts: [String] = []
    if network { parts.append("network") }
    if !read.isEmpty { parts.append("read " + read.joined(separator: " ")) }
    if !write.isEmpty { parts.append("write " + write.joined(separator: " ")) }
    return parts.joined(separator: ", ")
  }
}
