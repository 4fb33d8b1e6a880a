// UTF8Repair: command output as text, invalid bytes as U+FFFD, fast for binary output.

/// `String(decoding:as: UTF8.self)` with the same result (one U+FFFD per maximal ill-formed
/// subsequence, as Unicode recommends and the standard library does), made for binary
/// output: the library's repair re-examines the input after each invalid byte and decoded
/// random bytes at about 200 MB/s; this is one pass over raw bytes, after which the library
/// only validates. ASCII and valid text go to the library at once.
enum UTF8Repair {
  static func string(_ bytes: UnsafeBufferPointer<UInt8>) -> String {
    guard let base = bytes.baseAddress, let firstBad = firstInvalid(base, bytes.count) else {
      return String(decoding: bytes, as: UTF8.self)
    }
    let count = bytes.count
    // At most three bytes (U+FFFD) for each input byte.
    return String(unsafeUninitializedCapacity: count * 3) { out in
      let to = out.baseAddress!
      var n = firstBad
      to.update(from: base, count: firstBad)
      var i = firstBad
      while i < count {
        let length = validLength(base, i, count)
        if length > 0 {
          (to + n).update(from: base + i, count: length)
          n += length
          i += length
        } else {
          to[n] = 0xEF; to[n + 1] = 0xBF; to[n + 2] = 0xBD
          n += 3
          i += max(1, subpartLength(base, i, count))
        }
      }
      return n
    }
  }

  /// The index of the first byte that does not start a valid sequence, or nil.
  private static func firstInvalid(_ base: UnsafePointer<UInt8>, _ count: Int) -> Int? {
    var i = 0
    while i < count {
      if base[i] < 0x80 { i += 1; continue }
      let length = validLength(base, i, count)
      if length == 0 { return i }
      i += length
    }
    return nil
  }

  /// The length of the valid sequence at `i`, or 0.
  @inline(__always)
  private static func validLength(_ base: UnsafePointer<UInt8>, _ i: Int, _ count: Int) -> Int {
    let lead = base[i]
    if lead < 0x80 { return 1 }
    let (length, low, high) = shape(lead)
    guard length > 0, i + length <= count else { return 0 }
    let second = base[i + 1]
    guard second >= low && second <= high else { return 0 }
    for k in 2..<max(2, length) where base[i + k] & 0xC0 != 0x80 { return 0 }
    return length
  }

  /// Of an ill-formed sequence at `i`: how many bytes its maximal subpart takes (the lead and
  /// the continuation bytes that could still have led to a valid sequence).
  private static func subpartLength(_ base: UnsafePointer<UInt8>, _ i: Int, _ count: Int) -> Int {
    let (length, low, high) = shape(base[i])
    guard length > 0 else { return 1 }
    var k = 1
    while k < length && i + k < count {
      let byte = base[i + k]
      let fits = k == 1 ? byte >= low && byte <= high : byte & 0xC0 == 0x80
      guard fits else { break }
      k += 1
    }
    return k
  }

  /// A lead byte's sequence length and the range its second byte must be in (0: not a lead).
  @inline(__always)
  private static func shape(_ lead: UInt8) -> (Int, UInt8, UInt8) {
    switch lead {
    case 0xC2...0xDF: return (2, 0x80, 0xBF)
    case 0xE0: return (3, 0xA0, 0xBF)
    case 0xE1...0xEC, 0xEE...0xEF: return (3, 0x80, 0xBF)
    case 0xED: return (3, 0x80, 0x9F)
    case 0xF0: return (4, 0x90, 0xBF)
    case 0xF1...0xF3: return (4, 0x80, 0xBF)
    case 0xF4: return (4, 0x80, 0x8F)
    default: return (0, 0, 0)
    }
  }
}
