// OperationRecord: what the store keeps of an operation's last success, and its compact encoding.

/// What an operation's fingerprint was made of at its last success: enough to say it is up
/// to date, and otherwise which part changed.
public struct OperationRecord: Equatable, Sendable {
  /// The run it last succeeded in.
  public var run: Int64 = 0
  public var fingerprint = Digest.zero
  /// What its body runs and what it declared (`command`, `env`, `cwd`, `key`, `code`, …).
  public var identity: [Part] = []
  public var inputs: [FileRecord] = []
  /// What its depfile named after that success: inputs of the next run.
  public var discovered: [FileRecord] = []
  public var outputs: [FileRecord] = []
  /// Each upstream operation's declared outputs as they were.
  public var upstream: [Upstream] = []

  public struct Part: Equatable, Sendable {
    public var label: String, text: String
    public init(_ label: String, _ text: String) { (self.label, self.text) = (label, text) }
  }

  public struct Upstream: Equatable, Sendable {
    public var name: String
    public var outputs: [Produced]
  }

  /// One output as a dependent saw it: its path and contents.
  public struct Produced: Equatable, Sendable {
    public var path: String
    public var digest: Digest
  }

  /// The fingerprint of the parts: equal parts, equal fingerprint. An upstream operation
  /// counts by the hash of what it produced (`producedDigest`).
  static func fingerprint(
    identity: [Part], inputs: [FileRecord], discovered: [FileRecord], upstream: [(name: String, digest: Digest)]
  ) -> Digest {
    var w = ByteWriter()
    w.count(identity.count)
    for part in identity {
      w.string(part.label)
      w.string(part.text)
    }
    for list in [inputs, discovered] {
      w.count(list.count)
      for file in list {
        w.string(file.path)
        w.digest(file.digest)
      }
    }
    w.count(upstream.count)
    for up in upstream {
      w.string(up.name)
      w.digest(up.digest)
    }
    return FileLook.hash(w.bytes)
  }

  /// The stats its fingerprint was taken with, and its outputs': while every one of them is
  /// the same (and was written well before it was hashed), the contents are too, and the
  /// check needs no hashing and no decoding of the record (ninja's no-op speed).
  static func quickSignature(
    identity: [Part], inputs: [FileRecord], outputs: [FileRecord], upstream: [(name: String, digest: Digest)],
    scratch w: inout ByteWriter
  ) -> Digest {
    w.bytes.removeAll(keepingCapacity: true)
    for part in identity {
      w.string(part.label)
      w.string(part.text)
    }
    w.files(inputs)
    w.files(outputs)
    for up in upstream {
      w.string(up.name)
      w.digest(up.digest)
    }
    return FileLook.hash(w.bytes)
  }

  /// One hash of what an operation produced (paths and contents), as its dependents see it.
  static func producedDigest(_ files: [Produced]) -> Digest {
    var w = ByteWriter()
    for file in files {
      w.string(file.path)
      w.digest(file.digest)
    }
    return FileLook.hash(w.bytes)
  }

  /// Its outputs as dependents see them.
  var produced: [Produced] { outputs.map { Produced(path: $0.path, digest: $0.digest) } }

  /// The quick signature of this record, or nil when a file was not yet trusted (or it has
  /// a depfile: its discovered inputs are checked from the record).
  var quick: Digest? {
    guard discovered.isEmpty, inputs.allSatisfy({ $0.trusted || $0.size < 0 }), outputs.allSatisfy(\.trusted) else {
      return nil
    }
    var w = ByteWriter()
    return Self.quickSignature(
      identity: identity, inputs: inputs, outputs: outputs, upstream: upstreamDigests, scratch: &w)
  }

  /// Each upstream operation by the hash of what it produced.
  var upstreamDigests: [(name: String, digest: Digest)] {
    upstream.map { ($0.name, Self.producedDigest($0.outputs)) }
  }

  func encoded() -> [UInt8] {
    var w = ByteWriter()
    w.count(identity.count)
    for part in identity {
      w.string(part.label)
      w.string(part.text)
    }
    for list in [inputs, discovered, outputs] {
      w.count(list.count)
      for file in list { w.file(file) }
    }
    w.count(upstream.count)
    for up in upstream {
      w.string(up.name)
      w.count(up.outputs.count)
      for out in up.outputs {
        w.string(out.path)
        w.digest(out.digest)
      }
    }
    return w.bytes
  }

  /// Nil for bytes that are not a record (a damaged or foreign row: the operation runs).
  init?(run: Int64, fingerprint: Digest, bytes: [UInt8]) {
    (self.run, self.fingerprint) = (run, fingerprint)
    var r = ByteReader(bytes)
    guard let parts = r.count() else { return nil }
    for _ in 0..<parts {
      guard let label = r.string(), let text = r.string() else { return nil }
      identity.append(Part(label, text))
    }
    for list in 0..<3 {
      guard let n = r.count() else { return nil }
      var files: [FileRecord] = []
      files.reserveCapacity(n)
      for _ in 0..<n {
        guard let file = r.file() else { return nil }
        files.append(file)
      }
      switch list {
      case 0: inputs = files
      case 1: discovered = files
      default: outputs = files
      }
    }
    guard let ups = r.count() else { return nil }
    for _ in 0..<ups {
      guard let name = r.string(), let n = r.count() else { return nil }
      var outputs: [Produced] = []
      for _ in 0..<n {
        guard let path = r.string(), let digest = r.digest() else { return nil }
        outputs.append(Produced(path: path, digest: digest))
      }
      upstream.append(Upstream(name: name, outputs: outputs))
    }
    guard r.atEnd else { return nil }
  }

  public init() {}
}

/// Appends varints, strings and hashes.
struct ByteWriter {
  var bytes: [UInt8] = []

  mutating func varint(_ value: UInt64) {
    var v = value
    while v >= 0x80 {
      bytes.append(UInt8(v & 0x7f) | 0x80)
      v >>= 7
    }
    bytes.append(UInt8(v))
  }
  mutating func count(_ n: Int) { varint(UInt64(n)) }
  mutating func signed(_ n: Int64) { varint(UInt64(bitPattern: (n << 1) ^ (n >> 63))) }
  mutating func string(_ s: String) {
    count(s.utf8.count)
    bytes.append(contentsOf: s.utf8)
  }
  mutating func digest(_ d: Digest) {
    withUnsafeBytes(of: d.high.littleEndian) { bytes.append(contentsOf: $0) }
    withUnsafeBytes(of: d.low.littleEndian) { bytes.append(contentsOf: $0) }
  }
  mutating func double(_ d: Double) { withUnsafeBytes(of: d.bitPattern.littleEndian) { bytes.append(contentsOf: $0) } }
  /// An optional as a presence byte, then the value.
  mutating func optionalDouble(_ d: Double?) {
    bytes.append(d == nil ? 0 : 1)
    if let d { double(d) }
  }
  mutating func optionalInt(_ n: Int64?) {
    bytes.append(n == nil ? 0 : 1)
    if let n { signed(n) }
  }
  mutating func optionalString(_ s: String?) {
    bytes.append(s == nil ? 0 : 1)
    if let s { string(s) }
  }

  /// The stats of files (the quick signature's part).
  mutating func files(_ list: [FileRecord]) {
    count(list.count)
    for file in list {
      string(file.path)
      signed(file.size)
      signed(file.mtime)
      varint(file.inode)
    }
  }
  mutating func file(_ f: FileRecord) {
    string(f.path)
    signed(f.size)
    signed(f.mtime)
    varint(f.inode)
    digest(f.digest)
    bytes.append(f.trusted ? 1 : 0)
  }
}

/// Reads what ByteWriter wrote; nil at any fault.
struct ByteReader {
  let bytes: [UInt8]
  var at = 0
  init(_ bytes: [UInt8]) { self.bytes = bytes }

  var atEnd: Bool { at == bytes.count }

  mutating func varint() -> UInt64? {
    var value: UInt64 = 0
    var shift: UInt64 = 0
    while at < bytes.count, shift < 64 {
      let b = bytes[at]
      at += 1
      value |= UInt64(b & 0x7f) << shift
      if b < 0x80 { return value }
      shift += 7
    }
    return nil
  }
  mutating func count() -> Int? {
    guard let v = varint(), v <= UInt64(bytes.count - at) + 1 << 20 else { return nil }
    return Int(v)
  }
  mutating func signed() -> Int64? {
    guard let v = varint() else { return nil }
    return Int64(bitPattern: v >> 1) ^ -Int64(bitPattern: v & 1)
  }
  mutating func string() -> String? {
    guard let n = count(), n <= bytes.count - at else { return nil }
    defer { at += n }
    return String(decoding: bytes[at..<at + n], as: UTF8.self)
  }
  mutating func digest() -> Digest? {
    guard bytes.count - at >= 16 else { return nil }
    var high: UInt64 = 0, low: UInt64 = 0
    for k in 0..<8 { high |= UInt64(bytes[at + k]) << (8 * UInt64(k)) }
    for k in 0..<8 { low |= UInt64(bytes[at + 8 + k]) << (8 * UInt64(k)) }
    at += 16
    return Digest(high: high, low: low)
  }
  mutating func double() -> Double? {
    guard bytes.count - at >= 8 else { return nil }
    var bits: UInt64 = 0
    for k in 0..<8 { bits |= UInt64(bytes[at + k]) << (8 * UInt64(k)) }
    at += 8
    return Double(bitPattern: bits)
  }
  /// An optional: nil when the bytes are not one (`.some(nil)` for an absent value).
  mutating func optionalDouble() -> Double?? {
    guard let flag = flag() else { return nil }
    return flag ? double().map { .some($0) } : .some(nil)
  }
  mutating func optionalInt() -> Int64?? {
    guard let flag = flag() else { return nil }
    return flag ? signed().map { .some($0) } : .some(nil)
  }
  mutating func optionalString() -> String?? {
    guard let flag = flag() else { return nil }
    return flag ? string().map { .some($0) } : .some(nil)
  }
  private mutating func flag() -> Bool? {
    guard at < bytes.count, bytes[at] <= 1 else { return nil }
    at += 1
    return bytes[at - 1] == 1
  }
  mutating func file() -> FileRecord? {
    guard let path = string(), let size = signed(), let mtime = signed(), let inode = varint(),
      let digest = digest(), at < bytes.count
    else { return nil }
    let trusted = bytes[at] == 1
    at += 1
    return FileRecord(path: path, size: size, mtime: mtime, inode: inode, digest: digest, trusted: trusted)
  }
}
