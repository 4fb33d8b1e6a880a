// RunCommandArguments: the run command's options as swift-argument-parser sees them, made from their declarations (RunOption).
import ArgumentParser

/// The type of a choice option's value (`--progress`, `--executor`): swift-argument-parser
/// reads it and lists its words in the help and its errors; completions offer `words`.
protocol ChoiceArgument: ExpressibleByArgument, CaseIterable, RawRepresentable, Sendable where RawValue == String {}

extension ChoiceArgument {
  static var words: [String] { allCases.map { $0.rawValue } }
}

/// swift-argument-parser finds a command's arguments by reflecting it: `RunCommand` shows it,
/// instead of one property per option, the property wrappers the options' declarations make
/// (in the help's order, then the script and targets), and reads the parsed values back
/// through the same declarations into `options`.
extension RunCommand: CustomReflectable {
  /// An argument's key: an option's long spelling (else its short one), or `words`.
  private struct Key: CodingKey {
    let stringValue: String
    init(stringValue: String) { self.stringValue = stringValue }
    var intValue: Int? { nil }
    init?(intValue: Int) { nil }
  }

  private static let wordsKey = "words"

  var customMirror: Mirror {
    var made = RunOption.helpOrder.map { option -> Mirror.Child in (option.key, option.argument) }
    made.append(
      (
        Self.wordsKey,
        Argument<[String]>(
          wrappedValue: [],
          help: ArgumentHelp(
            "The workflow script (a .lua file, a file whose first line is #!…taskrun, or - for standard input), then operations to run with their dependencies.",
            valueName: "script-and-targets"))
      ))
    // Children as an index range mapped, not the array itself: the first Mirror of an array
    // makes its collection box's type at run time, about 300,000 instructions of start-up
    // for --version and -kq (callgrind).
    let children = (0..<made.count).lazy.map { made[$0] }
    return Mirror(self, children: children, displayStyle: .struct)
  }

  init(from decoder: any Decoder) throws {
    self.init()
    let container = try decoder.container(keyedBy: Key.self)
    for option in RunOption.helpOrder {
      guard let value = try option.parsed(in: container, Key(stringValue: option.key)) else { continue }
      // swift-argument-parser has read the value as the declaration's type: it lands.
      guard option.read(value, into: &options) else { throw ValidationError("\(option.key): '\(value)' was not read") }
    }
    options.words = try container.decode(Argument<[String]>.self, forKey: Key(stringValue: Self.wordsKey)).wrappedValue
  }
}

extension RunOption {
  /// The option's key among swift-argument-parser's arguments.
  var key: String { declaration.long ?? declaration.short ?? "" }

  /// The property wrapper swift-argument-parser reads the option with; its default is
  /// `RunOptions()`'s.
  var argument: Any {
    switch declaration.value {
    case .flag: Flag(wrappedValue: false, name: names, help: help)
    case .number: Option<Int?>(name: names, help: help)
    case .file, .folder, .word: Option<String?>(name: names, help: help)
    case .choice(let type, let current): Self.argument(type, default: current(RunOptions()), names, help)
    }
  }

  private static func argument<T: ChoiceArgument>(
    _ type: T.Type, default initial: String?,
    _ names: NameSpecification, _ help: ArgumentHelp
  ) -> Any {
    if let initial, let value = T(rawValue: initial) { return Option<T>(wrappedValue: value, name: names, help: help) }
    return Option<T?>(name: names, help: help)
  }

  /// The value swift-argument-parser parsed, as the quick parse reads it (`read`): nil where
  /// the option was not given and has no default, "" for a flag given.
  func parsed<K: CodingKey>(in container: KeyedDecodingContainer<K>, _ key: K) throws -> String? {
    switch declaration.value {
    case .flag: try container.decode(Flag<Bool>.self, forKey: key).wrappedValue ? "" : nil
    case .number: try container.decode(Option<Int?>.self, forKey: key).wrappedValue.map { String($0) }
    case .file, .folder, .word: try container.decode(Option<String?>.self, forKey: key).wrappedValue
    case .choice(let type, let current):
      try Self.parsed(type, optional: current(RunOptions()) == nil, in: container, key)
    }
  }

  private static func parsed<T: ChoiceArgument, K: CodingKey>(
    _ type: T.Type, optional: Bool, in container: KeyedDecodingContainer<K>, _ key: K
  ) throws -> String? {
    optional
      ? try container.decode(Option<T?>.self, forKey: key).wrappedValue?.rawValue
      : try container.decode(Option<T>.self, forKey: key).wrappedValue.rawValue
  }
}
