// The default descriptions of a ProgressNode (words in ProgressLanguage), and the number formats they use.
//
// swift-corelibs-foundation returns "" for both descriptions (unimplemented), so these follow
// Darwin's English output as documented in Progress.swift's doc comments ("30% completed",
// "Copying 10 files…", "3 of 10 files", "123 KB of 789.1 MB",
// "1.61 GB of 3.22 GB (2 KB/sec) — 2 minutes remaining", "1 minute remaining (1 KB/sec)") and
// ByteCountFormatter's adaptive file style (decimal units; 0 fraction digits for bytes and
// KB, 1 for MB, 2 for GB and up, trailing zeros dropped; zero is "Zero KB"). The time left
// reads like DateComponentsFormatter with its approximation and remaining phrases:
// "About 1 minute, 37 seconds remaining". Choices where nothing documented applies are
// noted at each function.

extension ProgressNode {
  /// `description` if set, else the default: "50% completed" (percent rounded down); for
  /// kind `file` with a `fileOperation`: "Downloading…", "Downloading 9 files…" or
  /// "Downloading “name”…" (one file with a `fileURL`). Indeterminate, non-file: "".
  public var localizedDescription: String {
    if let description { return description }
    let language = ProgressLanguage.current
    if kind == .file, let fileOperation {
      let verb = language.verb(fileOperation)
      if let fileURL, fileTotalCount == nil || fileTotalCount == 1,
        let name = ProgressFormat.displayName(fileURL)
      {
        return language.verbOneFile(verb, name)
      }
      if let files = fileTotalCount, files >= 0 { return language.verbFiles(verb, Int64(files)) }
      return "\(verb)…"
    }
    if isIndeterminate { return "" }
    return language.percentCompleted(ProgressFormat.percent(fraction))
  }

  /// Whether `localizedAdditionalDescription` says the node is paused (the default words of a
  /// paused `file` progress do), so a view need not say it again.
  public var wordsSayPaused: Bool { isPaused && additionalDescription == nil && kind == .file }

  /// `additionalDescription` if set, else the default: "3 of 6" (with thousands separators;
  /// "" when indeterminate). Kind `file`: "419 KB of 5.3 MB", then " (50 KB/sec)" when the
  /// throughput is known and " — About 1 minute, 37 seconds remaining" when the time left is
  /// known and the node is not finished. Without a byte total it shows the bytes done, or
  /// else "3 of 10 files" from the file counts, or else only the time and rate:
  /// "About 1 minute remaining (1 KB/sec)". Paused: "419 KB of 5.3 MB — paused", no rate.
  public var localizedAdditionalDescription: String {
    if let additionalDescription { return additionalDescription }
    let language = ProgressLanguage.current
    guard kind == .file else {
      if isIndeterminate { return "" }
      return language.countOf(ProgressFormat.count(completed), ProgressFormat.count(total))
    }
    // The bytes done include the unfinished children's share (what `fraction` shows); for a
    // node without children that is `completed`.
    let effective = effectiveCompleted.rounded()
    let done = effective.magnitude < 9e18 ? Int64(effective) : completed
    var text = ""
    if total > 0 && completed >= 0 {
      text = language.countOf(ProgressFormat.bytes(done), ProgressFormat.bytes(total))
    } else if completed > 0 {
      text = ProgressFormat.bytes(done)
    } else if let files = fileTotalCount, files >= 0 {
      let doneFiles = Int64(max(0, fileCompletedCount ?? 0))
      text = language.filesOf(doneFiles, Int64(files))
    }
    if isPaused { return text.isEmpty ? language.paused : text + " — " + language.paused }
    var rate: String?
    if let perSecond = throughput, perSecond.isFinite, perSecond >= 0.5 {
      rate = language.rate(ProgressFormat.bytes(Int64(perSecond.rounded())))
    }
    var remaining: String?
    if !isFinished, let seconds = estimatedTimeRemaining, seconds.isFinite, seconds > 0 {
      remaining = ProgressFormat.timeRemaining(seconds)
    }
    if text.isEmpty {
      switch (remaining, rate) {
      case let (remaining?, rate?): return "\(remaining) (\(rate))"
      case let (remaining?, nil): return remaining
      case let (nil, rate?): return rate
      case (nil, nil): return ""
      }
    }
    if let rate { text += " (\(rate))" }
    if let remaining { text += " — \(remaining)" }
    return text
  }
}

/// The number, byte and duration formats of the progress descriptions, in the language of
/// `ProgressLanguage.current`; reporters use them too so that the status line reads like
/// the descriptions.
public enum ProgressFormat {
  /// Whole percent, rounded down like `Int(fraction * 100)` but immune to binary fractions
  /// landing just below the integer (0.29 × 100 = 28.999…). Negative fractions give 0.
  public static func percent(_ fraction: Double) -> Int {
    guard fraction.isFinite, fraction > 0 else { return 0 }
    return Int((min(fraction, 1e12) * 100 + 1e-9).rounded(.down))
  }

  /// A count with thousands separators, like NumberFormatter's decimal style: "1,234,567"
  /// ("1 234 567" in Russian).
  public static func count(_ value: Int64) -> String {
    let digits = String(value.magnitude)
    var out = value < 0 ? "-" : ""
    let lead = digits.count % 3
    let separator = ProgressLanguage.current.groupSeparator
    for (i, ch) in digits.enumerated() {
      if i > 0 && (i - lead) % 3 == 0 { out.append(separator) }
      out.append(ch)
    }
    return out
  }

  private static let byteUnits: [(size: Double, digits: Int)] = [
    (1e3, 0), (1e6, 1), (1e9, 2), (1e12, 2), (1e15, 2), (1e18, 2)
  ]

  /// ByteCountFormatter's adaptive file style: "Zero KB", "1 byte", "999 bytes", "419 KB",
  /// "5.3 MB", "1.61 GB". The unit is chosen after rounding, so 999,999 bytes is "1 MB" (as
  /// on Darwin; corelibs Foundation picks the unit first and prints "1,000 KB"). Halves round
  /// to even, as NumberFormatter does.
  public static func bytes(_ count: Int64) -> String {
    let language = ProgressLanguage.current
    if count == 0 { return language.zeroBytes }
    let sign = count < 0 ? "-" : ""
    let magnitude = count.magnitude
    if magnitude < 1000 { return language.bytes(Int64(magnitude), "\(sign)\(magnitude)") }
    var index = 0
    while true {
      let unit = byteUnits[index]
      let scale = pow10(unit.digits)
      let scaled = (Double(magnitude) / unit.size * Double(scale)).rounded(.toNearestOrEven)
      if scaled >= 1000 * Double(scale) && index + 1 < byteUnits.count {
        index += 1
        continue
      }
      return "\(sign)\(decimal(Int64(scaled), digits: unit.digits)) \(language.byteUnits[index])"
    }
  }

  /// "About 1 minute, 37 seconds remaining": the two largest units starting at the first
  /// non-zero one (days, hours, minutes, seconds), the smaller one truncated and left out when
  /// zero; at least 1 second.
  public static func timeRemaining(_ seconds: Double) -> String {
    ProgressLanguage.current.timeRemaining(duration(seconds))
  }

  /// "1 minute, 37 seconds", "2 hours", "5 seconds" (see `timeRemaining`).
  public static func duration(_ seconds: Double) -> String {
    let whole: Int64 = seconds.isFinite ? Int64(max(1, min(seconds, 1e15)).rounded()) : 1
    let language = ProgressLanguage.current
    let sizes: [Int64] = [86_400, 3_600, 60, 1]
    var parts: [String] = []
    var rest = whole
    for (unit, size) in sizes.enumerated() {
      let n = rest / size
      rest %= size
      if parts.isEmpty {
        if n > 0 { parts.append(language.unit(n, unit)) }
      } else {
        if n > 0 { parts.append(language.unit(n, unit)) }
        break
      }
    }
    return parts.joined(separator: language.unitSeparator)
  }

  /// The last path component of a path or URL ("file:///a/b%20c.txt" → "b c.txt"); nil if
  /// there is none.
  static func displayName(_ url: String) -> String? {
    var path = Substring(url)
    if let scheme = path.firstRange(of: "://") { path = path[scheme.upperBound...] }
    if let query = path.firstIndex(where: { $0 == "?" || $0 == "#" }) { path = path[..<query] }
    while path.hasSuffix("/") { path = path.dropLast() }
    let name = path.split(separator: "/", omittingEmptySubsequences: true).last.map(String.init)
    guard let name, !name.isEmpty else { return nil }
    return url.contains("://") ? (percentDecoded(name) ?? name) : name
  }

  private static func percentDecoded(_ text: String) -> String? {
    var bytes: [UInt8] = []
    var utf8 = text.utf8.makeIterator()
    while let byte = utf8.next() {
      if byte == UInt8(ascii: "%") {
        guard let hi = utf8.next().flatMap(hexValue), let lo = utf8.next().flatMap(hexValue) else {
          return nil
        }
        bytes.append(hi << 4 | lo)
      } else {
        bytes.append(byte)
      }
    }
    return String(validating: bytes, as: UTF8.self)
  }

  private static func hexValue(_ c: UInt8) -> UInt8? {
    switch c {
    case UInt8(ascii: "0")...UInt8(ascii: "9"): c - UInt8(ascii: "0")
    case UInt8(ascii: "a")...UInt8(ascii: "f"): c - UInt8(ascii: "a") + 10
    case UInt8(ascii: "A")...UInt8(ascii: "F"): c - UInt8(ascii: "A") + 10
    default: nil
    }
  }

  private static func pow10(_ n: Int) -> Int64 {
    var p: Int64 = 1
    for _ in 0..<n { p *= 10 }
    return p
  }

  /// `scaled` / 10^digits with trailing zeros dropped: (53, 1) → "5.3", (150, 2) → "1.5".
  private static func decimal(_ scaled: Int64, digits: Int) -> String {
    let scale = pow10(digits)
    let whole = scaled / scale
    var fraction = scaled % scale
    guard fraction != 0 else { return count(whole) }
    var width = digits
    while fraction % 10 == 0 {
      fraction /= 10
      width -= 1
    }
    let digitsText = String(fraction)
    return count(whole) + ProgressLanguage.current.decimalSeparator
      + String(repeating: "0", count: width - digitsText.count) + digitsText
  }
}
