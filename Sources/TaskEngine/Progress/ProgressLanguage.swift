// ProgressLanguage: the languages of the progress words (English, Simplified Chinese, Russian) and their number formats.
import Synchronization

/// The language progress descriptions, the live view and the ETA speak: chosen once per
/// process from `--lang` or the locale (`LC_ALL`, then `LC_MESSAGES`, then `LANG`, as POSIX
/// orders them), English when the locale names none of these. Numbers follow the language:
/// "1,234.5" in English and Chinese, "1 234,5" in Russian (a no-break space between groups).
public enum ProgressLanguage: UInt8, Sendable, CaseIterable {
  case english, chinese, russian

  /// What `--lang` takes: en, zh (zh_CN, zh-Hans), ru, or a locale name (ru_RU.UTF-8).
  public init?(code: String) {
    let lower = code.lowercased()
    let base = lower.split(whereSeparator: { $0 == "_" || $0 == "-" || $0 == "." || $0 == "@" }).first.map(String.init)
    switch base {
    case "en", "c", "posix": self = .english
    case "ru": self = .russian
    case "zh":
      // Simplified Chinese only: Taiwan's, Hong Kong's and Macau's locales write Traditional.
      let traditional = ["_tw", "-tw", "_hk", "-hk", "_mo", "-mo", "hant"].contains { lower.contains($0) }
      if traditional { return nil }
      self = .chinese
    default: return nil
    }
  }

  /// The language of the locale the environment names (English if none of ours);
  /// `variable` reads one variable of it.
  public static func fromLocale(_ variable: (String) -> String?) -> ProgressLanguage {
    for key in ["LC_ALL", "LC_MESSAGES", "LANG"] {
      guard let value = variable(key), !value.isEmpty else { continue }
      return ProgressLanguage(code: value) ?? .english  // the first one set decides
    }
    return .english
  }

  private static let chosen = Atomic<UInt8>(0)

  /// The process's language (set at start-up; English until then).
  public static var current: ProgressLanguage {
    get { ProgressLanguage(rawValue: chosen.load(ordering: .relaxed)) ?? .english }
    set { chosen.store(newValue.rawValue, ordering: .relaxed) }
  }

  /// The code `--lang` and the docs use.
  public var code: String {
    switch self {
    case .english: "en"
    case .chinese: "zh"
    case .russian: "ru"
    }
  }

  // MARK: Numbers

  var groupSeparator: String { self == .russian ? "\u{A0}" : "," }
  var decimalSeparator: String { self == .russian ? "," : "." }

  /// Russian's plural forms: one (1, 21, …), few (2–4, 22–24, …), many (the rest).
  static func russianForm(_ n: Int64, _ one: String, _ few: String, _ many: String) -> String {
    let (ten, hundred) = (n.magnitude % 10, n.magnitude % 100)
    if ten == 1 && hundred != 11 { return one }
    if (2...4).contains(ten) && !(12...14).contains(hundred) { return few }
    return many
  }

  // MARK: Progress words

  /// "50% completed"
  public func percentCompleted(_ percent: Int) -> String {
    switch self {
    case .english: "\(percent)% completed"
    case .chinese: "已完成 \(percent)%"
    case .russian: "Выполнено \(percent)\u{A0}%"
    }
  }

  /// Whether `text` is what `percentCompleted` says (a view leaves it out beside its bar).
  public func isPercentCompleted(_ text: String) -> Bool {
    switch self {
    case .english: text.hasSuffix("% completed")
    case .chinese: text.hasPrefix("已完成 ") && text.hasSuffix("%")
    case .russian: text.hasPrefix("Выполнено ") && text.hasSuffix("%")
    }
  }

  /// "3 of 6", "419 KB of 5.3 MB" (the numbers already formatted)
  func countOf(_ done: String, _ total: String) -> String {
    switch self {
    case .english: "\(done) of \(total)"
    case .chinese: "\(done)/\(total)"
    case .russian: "\(done) из \(total)"
    }
  }

  /// "3 of 10 files"
  func filesOf(_ done: Int64, _ total: Int64) -> String {
    let (a, b) = (ProgressFormat.count(done), ProgressFormat.count(total))
    switch self {
    case .english: return "\(a) of \(b) files"
    case .chinese: return "\(a)/\(b) 个文件"
    case .russian:
      // "из" takes the genitive: 1 файла, 2 and more файлов.
      let word = total.magnitude % 10 == 1 && total.magnitude % 100 != 11 ? "файла" : "файлов"
      return "\(a) из \(b) \(word)"
    }
  }

  func verb(_ operation: ProgressNode.FileOperation) -> String {
    switch (self, operation) {
    case (.english, .downloading): "Downloading"
    case (.english, .decompressing): "Decompressing"
    case (.english, .receiving): "Receiving"
    case (.english, .copying): "Copying"
    case (.chinese, .downloading): "正在下载"
    case (.chinese, .decompressing): "正在解压缩"
    case (.chinese, .receiving): "正在接收"
    case (.chinese, .copying): "正在拷贝"
    case (.russian, .downloading): "Загрузка"
    case (.russian, .decompressing): "Распаковка"
    case (.russian, .receiving): "Получение"
    case (.russian, .copying): "Копирование"
    }
  }

  /// "Downloading “photo.jpg”…"
  func verbOneFile(_ verb: String, _ name: String) -> String {
    switch self {
    case .english: "\(verb) “\(name)”…"
    case .chinese: "\(verb)“\(name)”…"
    case .russian: "\(verb) «\(name)»…"
    }
  }

  /// "Downloading 9 files…"
  func verbFiles(_ verb: String, _ files: Int64) -> String {
    let n = ProgressFormat.count(files)
    switch self {
    case .english: return "\(verb) \(n) \(files == 1 ? "file" : "files")…"
    case .chinese: return "\(verb) \(n) 个文件…"
    case .russian: return "\(verb) \(n) \(Self.russianForm(files, "файла", "файлов", "файлов"))…"
    }
  }

  var paused: String {
    switch self {
    case .english: "paused"
    case .chinese: "已暂停"
    case .russian: "приостановлено"
    }
  }

  /// "50 KB/sec"
  func rate(_ bytes: String) -> String {
    switch self {
    case .english: "\(bytes)/sec"
    case .chinese: "\(bytes)/秒"
    case .russian: "\(bytes)/с"
    }
  }

  /// Byte unit names, KB to EB, and the words for zero, one and more bytes.
  var byteUnits: [String] {
    self == .russian ? ["КБ", "МБ", "ГБ", "ТБ", "ПБ", "ЭБ"] : ["KB", "MB", "GB", "TB", "PB", "EB"]
  }

  var zeroBytes: String {
    switch self {
    case .english: "Zero KB"
    case .chinese: "零 KB"
    case .russian: "0 КБ"
    }
  }

  func bytes(_ n: Int64, _ text: String) -> String {
    switch self {
    case .english: "\(text) \(n == 1 ? "byte" : "bytes")"
    case .chinese: "\(text) 字节"
    case .russian: "\(text) \(Self.russianForm(n, "байт", "байта", "байт"))"
    }
  }

  /// "About 1 minute, 37 seconds remaining"
  func timeRemaining(_ duration: String) -> String {
    switch self {
    case .english: "About \(duration) remaining"
    case .chinese: "大约还剩 \(duration)"
    case .russian: "Осталось около \(duration)"
    }
  }

  /// One unit of a duration: 0 days, 1 hours, 2 minutes, 3 seconds.
  func unit(_ n: Int64, _ unit: Int) -> String {
    let count = ProgressFormat.count(n)
    switch self {
    case .english:
      let name = ["day", "hour", "minute", "second"][unit]
      return "\(count) \(name)\(n == 1 ? "" : "s")"
    case .chinese:
      return "\(count) " + ["天", "小时", "分钟", "秒"][unit]
    case .russian:
      // The genitive "около" takes: около 1 минуты, около 2 минут, около 5 минут.
      let forms = [
        ("дня", "дней", "дней"), ("часа", "часов", "часов"), ("минуты", "минут", "минут"),
        ("секунды", "секунд", "секунд")
      ][unit]
      return "\(count) " + Self.russianForm(n, forms.0, forms.1, forms.2)
    }
  }

  /// Between the two units of a duration: "1 minute, 37 seconds".
  var unitSeparator: String { self == .english ? ", " : " " }

  // MARK: The live view's words

  /// The run's status line: stopping, done, failed, cancelled, running, pending, elapsed, ETA.
  public func status(_ word: StatusWord, _ n: Int = 0) -> String {
    switch (self, word) {
    case (.english, .stopping): "stopping…"
    case (.english, .done): "\(n) done"
    case (.english, .failed): "\(n) failed"
    case (.english, .cancelled): "\(n) cancelled"
    case (.english, .running): "\(n) running"
    case (.english, .pending): "\(n) pending"
    case (.english, .elapsed): "elapsed"
    case (.english, .eta): "ETA"
    case (.english, .paused): "paused"
    case (.chinese, .stopping): "正在停止…"
    case (.chinese, .done): "\(n) 已完成"
    case (.chinese, .failed): "\(n) 失败"
    case (.chinese, .cancelled): "\(n) 已取消"
    case (.chinese, .running): "\(n) 运行中"
    case (.chinese, .pending): "\(n) 等待中"
    case (.chinese, .elapsed): "已用"
    case (.chinese, .eta): "预计剩余"
    case (.chinese, .paused): "已暂停"
    case (.russian, .stopping): "остановка…"
    case (.russian, .done): "готово: \(n)"
    case (.russian, .failed): "ошибок: \(n)"
    case (.russian, .cancelled): "отменено: \(n)"
    case (.russian, .running): "выполняется: \(n)"
    case (.russian, .pending): "ожидает: \(n)"
    case (.russian, .elapsed): "прошло"
    case (.russian, .eta): "осталось"
    case (.russian, .paused): "приостановлено"
    }
  }

  public enum StatusWord: Sendable { case stopping, done, failed, cancelled, running, pending, elapsed, eta, paused }
}
