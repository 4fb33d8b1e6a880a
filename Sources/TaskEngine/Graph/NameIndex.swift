// NameIndex: operation names to ids, in 8-byte slots that keep each name's hash.

/// An open-addressing table (linear probing, at most half full) whose slots hold a name's
/// 32-bit hash and the id of the operation that has it; names themselves are read from the
/// nodes (`operations[id - 1].name`) only when hashes match. A `[String: OperationNode]` took
/// 24 bytes a slot, hashed each name with SipHash and hashed every name again each time it
/// grew: 880 instructions an operation on a 10,000-operation graph, and at a million names a
/// 48 MB table.
struct NameIndex {
  /// 0: empty; otherwise `hash << 32 | id` (ids count from 1).
  private var slots: [UInt64] = []
  private(set) var count = 0

  /// FNV-1a over the UTF-8 bytes, then MurmurHash3's finalizer so that the low bits, which
  /// pick the slot, depend on every byte.
  static func hash(_ name: String) -> UInt32 {
    var h: UInt32 = 2_166_136_261
    var name = name
    name.withUTF8 { bytes in
      for byte in bytes { h = (h ^ UInt32(byte)) &* 16_777_619 }
    }
    h ^= h >> 16; h = h &* 0x85eb_ca6b
    h ^= h >> 13; h = h &* 0xc2b2_ae35
    return h ^ (h >> 16)
  }

  /// The slot holding `name`, or the empty slot where it would go (the table is never full).
  private func find(_ name: String, _ hash: UInt32, in operations: [OperationNode]) -> (slot: Int, id: Int?) {
    let mask = slots.count - 1
    var i = Int(hash) & mask
    while true {
      let entry = slots[i]
      if entry == 0 { return (i, nil) }
      if UInt32(truncatingIfNeeded: entry >> 32) == hash {
        let id = Int(truncatingIfNeeded: entry & 0xffff_ffff)
        if operations[id - 1].name == name { return (i, id) }
      }
      i = (i + 1) & mask
    }
  }

  /// The id of the operation named `name`.
  func id(of name: String, in operations: [OperationNode]) -> Int? {
    count == 0 ? nil : find(name, Self.hash(name), in: operations).id
  }

  /// Records that operation `id` (already in `operations`) is named `name`, unless a name
  /// is taken: then nothing changes and the holder's id comes back.
  mutating func insert(_ name: String, id: Int, in operations: [OperationNode]) -> Int? {
    precondition(id > 0 && id <= Int(UInt32.max), "operation id out of range")
    if (count + 1) * 2 > slots.count { grow() }
    let hash = Self.hash(name)
    let (slot, holder) = find(name, hash, in: operations)
    if let holder { return holder }
    slots[slot] = UInt64(hash) << 32 | UInt64(id)
    count += 1
    return nil
  }

  /// `name` now names operation `id` (it named another one).
  mutating func replace(_ name: String, with id: Int, in operations: [OperationNode]) {
    let (slot, holder) = find(name, Self.hash(name), in: operations)
    precondition(holder != nil, "replacing a name that is not in the index")
    slots[slot] = slots[slot] & ~0xffff_ffff | UInt64(id)
  }

  /// Forgets `name`. Later entries of its run move back into the gap, so that every entry
  /// stays reachable from its home slot without tombstones.
  mutating func remove(_ name: String, in operations: [OperationNode]) {
    guard count > 0 else { return }
    let (found, holder) = find(name, Self.hash(name), in: operations)
    guard holder != nil else { return }
    var gap = found
    let mask = slots.count - 1
    slots[gap] = 0
    count -= 1
    var i = gap
    while true {
      i = (i + 1) & mask
      let entry = slots[i]
      if entry == 0 { return }
      let home = Int(truncatingIfNeeded: entry >> 32) & mask
      // The entry may move to the gap unless its home lies cyclically in (gap, i].
      let staysPut = gap <= i ? (home > gap && home <= i) : (home > gap || home <= i)
      if !staysPut {
        slots[gap] = entry
        slots[i] = 0
        gap = i
      }
    }
  }

  /// Doubles the table, placing entries by their kept hashes (no name is read or hashed).
  private mutating func grow() {
    let old = slots
    slots = Array(repeating: 0, count: max(16, old.count * 2))
    let mask = slots.count - 1
    for entry in old where entry != 0 {
      var i = Int(truncatingIfNeeded: entry >> 32) & mask
      while slots[i] != 0 { i = (i + 1) & mask }
      slots[i] = entry
    }
  }
}
