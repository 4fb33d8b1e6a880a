// TestSettings: busted's options, the command line over the .busted task, and the spec files
// they name (busted/modules/cli.lua and test_file_loader.lua).
import FoundationEssentials
import Glibc
import LuaHost
import TaskEngine

struct TestSettings {
  var options = TestOptions()
  var roots: [String]
  var patterns: [String]
  var excludes: [String]
  var rounds: Int
  var verbose: Bool
  var recursive: Bool
  var output: String
  var outputOptions: [String]

  /// `config` holds the .busted task's values as lists of strings, by busted's option name.
  /// As in busted, a key is an option's long name (`e` and `ROOT` aside): `p`, `t`, `v` and
  /// the other short names, `shuffle` and `sort` are not read from a .busted file.
  init(_ command: TestCommand, config: [String: [String]]) throws {
    func commas(_ lists: [String]) -> [String] {
      lists.flatMap { $0.split(separator: ",").map { $0.trimmed(newlines: false) } }
    }
    func list(_ command: [String], _ key: String) -> [String] {
      command.isEmpty ? config[key] ?? [] : command
    }
    func text(_ command: String?, _ key: String) -> String? { command ?? config[key]?.first }
    func flag(_ command: Bool?, _ key: String, _ otherwise: Bool) -> Bool {
      command ?? config[key]?.first.map { $0 == "true" } ?? otherwise
    }
    roots = list(command.roots, "ROOT")
    patterns = list(command.pattern, "pattern")
    if patterns.isEmpty { patterns = ["_spec"] }
    excludes = list(command.excludePattern, "exclude-pattern")
    rounds = try Self.wholeNumber(text(command.repeatCount, "repeat"), "--repeat") ?? 1
    guard (1...Limits.maxCount).contains(rounds) else {
      throw HostError("--repeat must be from 1 to \(Limits.maxCount) (got \(rounds))")
    }
    verbose = flag(command.verbose, "verbose", false)
    recursive = flag(command.recursive, "recursive", true)
    output = command.tap ? "TAP" : text(command.output, "output") ?? "utfTerminal"
    outputOptions = commas(list(command.outputOptions, "Xoutput"))
    if !Self.reports.contains(output) && !(command.list || flag(nil, "list", false)) {
      options.output = output
      options.outputArguments = outputOptions
    }
    options.enableSound = flag(command.enableSound, "enable-sound", false)
    options.verbose = verbose
    options.deferPrint = flag(command.deferPrint, "defer-print", false)

    options.filter = list(command.filter, "filter")
    options.filterOut = list(command.filterOut, "filter-out")
    options.names = list(command.name, "name")
    options.excludeNames = try text(command.excludeNamesFile, "exclude-names-file").map(Self.lines(of:)) ?? []
    options.logSuccess = try text(command.logSuccess, "log-success").map(Self.appendable)
    options.tags = commas(list(command.tags, "tags"))
    options.excludeTags = commas(list(command.excludeTags, "exclude-tags"))
    if let tag = options.tags.first(where: options.excludeTags.contains) {
      throw HostError("cannot use --tags and --exclude-tags for the same tag ('\(tag)')")
    }
    let order = Self.order(in: CommandLine.arguments)
    options.shuffleFiles = order.shuffleFiles ?? flag(nil, "shuffle-files", false)
    options.shuffleTests = order.shuffleTests ?? flag(nil, "shuffle-tests", false)
    options.sortFiles = order.sortFiles ?? flag(nil, "sort-files", false)
    options.sortTests = order.sortTests ?? flag(nil, "sort-tests", false)
    let seed = try Self.wholeNumber(text(command.seed, "seed"), "--seed")
    options.seed = seed ?? Int.random(in: 0...Int(UInt32.max))
    options.seedGiven = seed != nil
    options.keepGoing = flag(command.keepGoing, "keep-going", true)
    options.lazy = flag(command.lazy, "lazy", false)
    options.timeout = command.timeout
    options.list = command.list || flag(nil, "list", false)
    options.autoInsulate = flag(command.autoInsulate, "auto-insulate", true)
    options.suppressPending = flag(command.suppressPending, "suppress-pending", false)
    let lpath = list(command.lpath, "lpath")
    options.lpath = lpath.isEmpty ? "./src/?.lua;./src/?/?.lua;./src/?/init.lua" : lpath.joined(separator: ";")
    let cpath = list(command.cpath, "cpath")
    options.cpath = cpath.isEmpty ? "./csrc/?.so;./csrc/?/?.so;" : cpath.joined(separator: ";")
    options.statements = list(command.statements, "e")
    options.coverage = flag(command.coverage, "coverage", false)
    options.coverageConfig = text(command.coverageConfigFile, "coverage-config-file")
    options.helper = text(command.helper, "helper") ?? ""
    options.helperArguments = commas(list(command.helperOptions, "Xhelper"))
    options.language = text(command.lang, "lang") ?? "en"
    guard options.language.allSatisfy({ $0.isLetter || $0 == "-" }), !options.language.isEmpty else {
      throw HostError("--lang: '\(options.language)' is not a language name (en, de, fr, ...)")
    }
    options.loaders = try Self.loaders(command.loaders.isEmpty ? config["loaders"] : command.loaders)
    options.program = Self.executable
    options.interpreter = Self.luaInterpreter ?? Self.executable
    if !(command.ignoreLua || flag(nil, "ignore-lua", false)), let lua = text(command.lua, "lua") {
      guard let found = Self.executableOnPath(lua) else {
        throw HostError("--lua: no Lua interpreter '\(lua)' (a path, or a name on PATH)")
      }
      options.interpreter = found
    }
    options.arguments = Array(CommandLine.arguments.drop { $0 != "test" }.dropFirst())
  }

  /// --shuffle/--sort and their -files/-tests forms, as busted's command line sets them: in
  /// the order given, the last one of each pair winning (`--shuffle --no-shuffle-files`
  /// shuffles tests only). Nil for what the command line does not say.
  static func order(in arguments: [String]) -> (
    shuffleFiles: Bool?, shuffleTests: Bool?, sortFiles: Bool?, sortTests: Bool?
  ) {
    var result: (shuffleFiles: Bool?, shuffleTests: Bool?, sortFiles: Bool?, sortTests: Bool?) = (nil, nil, nil, nil)
    for argument in arguments.drop(while: { $0 != "test" }) {
      if argument == "--" { break }
      guard argument.hasPrefix("--") else { continue }  // a ROOT named "xxshuffle" is not --shuffle
      let on = !argument.hasPrefix("--no-")
      switch on ? argument.dropFirst(2) : argument.dropFirst(5) {
      case "shuffle": (result.shuffleFiles, result.shuffleTests) = (on, on)
      case "shuffle-files": result.shuffleFiles = on
      case "shuffle-tests": result.shuffleTests = on
      case "sort": (result.sortFiles, result.sortTests) = (on, on)
      case "sort-files": result.sortFiles = on
      case "sort-tests": result.sortTests = on
      default: continue
      }
    }
    return result
  }

  /// busted's --seed and --repeat: a number as Lua's tonumber reads it (`1e3`, `0x10`, `-5`),
  /// whole and within Lua's integers (math.randomseed and a count take no other).
  static func wholeNumber(_ text: String?, _ option: String) throws -> Int? {
    guard let text else { return nil }
    let trimmed = text.trimmed(newlines: true)
    if let value = Int(trimmed) { return value }
    if let value = Double(trimmed), value.rounded() == value, abs(value) < 9.2e18 { return Int(value) }
    throw HostError("\(option) must be a whole number (got \(TerminalText.escaped(text)))")
  }

  /// The names in an --exclude-names-file, a line each.
  /// A regular file of at most 64 MiB: a FIFO or a device (/dev/zero) would hold the run
  /// before it starts.
  static func lines(of path: String) throws -> [String] {
    var info = stat()
    guard stat(path, &info) == 0, info.st_mode & S_IFMT == S_IFREG, info.st_size <= 64 << 20,
      let data = FileManager.default.contents(atPath: path)
    else {
      throw HostError("--exclude-names-file: cannot read '\(path)' (a regular file of at most 64 MiB)")
    }
    var lines = String(decoding: data, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false)
    if lines.last == "" { lines.removeLast() }  // as io.lines reads them
    return lines.map(String.init)
  }

  /// --log-success's file, which Lua then opens to append: the open here never waits (a FIFO
  /// without a reader is refused, as --junit's is) and says why it cannot be written.
  static func appendable(_ path: String) throws -> String {
    let fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | O_NONBLOCK, 0o644)
    guard fd >= 0 else {
      let reason = errno == ENXIO ? "no reader on the FIFO" : String(cString: strerror(errno))
      throw HostError("--log-success: cannot write '\(path)': \(reason)")
    }
    close(fd)
    return path
  }

  /// A path, or a name looked up on PATH, that can be run.
  static func executableOnPath(_ name: String) -> String? {
    if name.contains("/") { return access(name, X_OK) == 0 ? name : nil }
    for folder in (Environment.variable("PATH") ?? "").split(separator: ":") {
      let path = "\(folder)/\(name)"
      if access(path, X_OK) == 0 { return path }
    }
    return nil
  }

  /// busted's --loaders: each given value (on the command line, else the .busted list or
  /// string) split at commas as busted splits them (a last empty item dropped), else
  /// lua,moonscript. busted stops at a name it has no loader module for.
  static func loaders(_ given: [String]?) throws -> [String] {
    guard let given else { return ["lua", "moonscript"] }
    var names = given.joined(separator: ",").split(separator: ",", omittingEmptySubsequences: false).map(String.init)
    if names.last == "" { names.removeLast() }
    for name in names where !["lua", "moonscript", "terra"].contains(name) {
      let note = name == "fennel" ? "; busted 2.3's fennel loader is not supported" : ""
      throw HostError("--loaders: no loader named '\(name)' (there are lua, moonscript and terra\(note))")
    }
    return names
  }

  /// taskrun's own path (what `arg[0]` names, as busted's does).
  static let executable =
    (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe"))
    ?? CommandLine.arguments[0]

  /// `arg[-1]`: the Lua interpreter on PATH that a spec may start again (busted runs under
  /// `lua`), else taskrun itself.
  static let luaInterpreter: String? = ["lua5.4", "lua"].lazy.compactMap(executableOnPath).first

  /// The spec files, as busted finds them: a ROOT that is a file is taken as it is; a folder
  /// is searched (with its subfolders unless --no-recursive) for names that match a pattern
  /// and no exclude pattern, not hidden, sorted. The loaders then load those of their
  /// extensions (.lua, .moon, .t); the others are found but not run, as in busted. A file
  /// named twice runs once.
  func files(_ host: ScriptHost) throws -> [String] {
    try host.checkPatterns("--pattern", patterns)
    try host.checkPatterns("--exclude-pattern", excludes)
    let manager = FileManager.default
    var folders = roots
    if folders.isEmpty {
      guard let found = ["spec", "tests"].first(where: { Self.isDirectory($0) }) else {
        throw HostError("no spec/ or tests/ folder here; give spec files or folders (taskrun test ROOT...)")
      }
      folders = [found]
    }
    var files: [String] = []
    for root in folders {
      guard manager.fileExists(atPath: root) else { throw HostError("Cannot find file or directory: \(root)") }
      guard Self.isDirectory(root) else {
        // A FIFO or a device would hold the run in its first read.
        guard Self.isRegularFile(root) else { throw HostError("\(root): not a regular file or folder") }
        files.append(root)
        continue
      }
      let found = ((try? manager.subpathsOfDirectory(atPath: root)) ?? [])
        .filter { relative in
          let name = relative.split(separator: "/").last.map(String.init) ?? relative
          guard !relative.split(separator: "/").contains(where: { $0.hasPrefix(".") }),
            recursive || !relative.contains("/")
          else { return false }
          return !host.fileName(name, matches: excludes) && host.fileName(name, matches: patterns)
        }
        .map { root.hasSuffix("/") ? root + $0 : root + "/" + $0 }
        .filter(Self.isRegularFile)  // not a folder, a FIFO or a device
        .sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
      files += found
    }
    var seen = Set<String>()
    files = files.filter { seen.insert(URL(fileURLWithPath: $0).standardizedFileURL.path).inserted }
    if files.isEmpty {
      throw HostError("No test files found matching Lua pattern: \(patterns.joined(separator: ", "))")
    }
    return files
  }

  /// The outputs taskrun reports itself (in Swift); any other -o name is a busted output
  /// handler in Lua (gtest, json, sound, a .lua file, a module: busted/handlers.lua).
  static let reports: Set<String> = ["utfTerminal", "plainTerminal", "TAP", "junit"]

  /// The report -o names (busted's output names; --tap is -o TAP). A Lua handler prints its
  /// own report: taskrun's says nothing (what tests print still shows) unless the handler does
  /// not load (`LuaHandlerReport.fallback`).
  func report(verbose: Bool, color: ColorPolicy) throws -> any TestReport {
    if options.list { return ListReport() }
    switch output {
    case "utfTerminal":
      // busted's utfTerminal takes -Xoutput --color and --plain, and refuses the rest; --plain
      // wins whatever the order (busted's handler checks it first)
      var given: Set<String> = []
      for option in outputOptions {
        guard option == "--color" || option == "--plain" else {
          throw HostError(
            option.hasPrefix("-")
              ? "\(output) output handler: unknown/bad flag: \(option)"
              : "\(output) output handler: bad number of arguments: 0 argument(s) must be specified, not 1")
        }
        given.insert(option)
      }
      let chosen =
        given.contains("--plain")
        ? ColorPolicy(enabled: false) : given.contains("--color") ? ColorPolicy(enabled: true) : color
      return TestReporter(verbose: verbose, color: chosen, marks: .utf, deferred: options.deferPrint)
    case "plainTerminal":
      // busted's plainTerminal reads no options (-Xoutput is ignored) and prints no colour
      return TestReporter(
        verbose: verbose, color: ColorPolicy(enabled: false), marks: .plain, deferred: options.deferPrint)
    case "TAP": return TapReporter()
    // busted's json handler, in Lua (busted/json.lua); what tests print goes to standard
    // error, so that standard output is the JSON alone
    case "json": return LuaHandlerReport(printsToStandardError: true)
    case "junit": return try JUnitReport.open(path: outputOptions.first ?? "-")
    default: return LuaHandlerReport()
    }
  }

  static func isDirectory(_ path: String) -> Bool {
    var info = stat()
    return stat(path, &info) == 0 && info.st_mode & S_IFMT == S_IFDIR
  }

  static func isRegularFile(_ path: String) -> Bool {
    var info = stat()
    return stat(path, &info) == 0 && info.st_mode & S_IFMT == S_IFREG
  }
}
