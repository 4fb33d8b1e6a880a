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
  var output: String
  var outputOptions: [String]

  /// `config` holds the .busted task's values as lists of strings, by option name.
  init(_ command: TestCommand, config: [String: [String]]) throws {
    func given(_ keys: String...) -> [String]? { keys.lazy.compactMap { config[$0] }.first }
    func commas(_ lists: [String]) -> [String] {
      lists.flatMap { $0.split(separator: ",").map { $0.trimmed(newlines: false) } }
    }
    func list(_ command: [String], _ keys: String...) -> [String] {
      command.isEmpty ? keys.lazy.compactMap { config[$0] }.first ?? [] : command
    }
    func flag(_ command: Bool?, _ keys: String...) -> Bool? {
      command ?? keys.lazy.compactMap { config[$0]?.first }.first.map { $0 == "true" }
    }
    func number(_ command: Int?, _ key: String) throws -> Int? {
      if let command { return command }
      guard let text = config[key]?.first else { return nil }
      guard let value = Int(text) else { throw HostError(".busted: '\(key)' must be a whole number (got \(text))") }
      return value
    }
    roots = list(command.roots, "ROOT")
    patterns = list(command.pattern, "pattern", "p")
    if patterns.isEmpty { patterns = ["_spec"] }
    excludes = list(command.excludePattern, "exclude-pattern")
    rounds = try number(command.repeatCount, "repeat") ?? 1
    guard (1...Limits.maxCount).contains(rounds) else {
      throw HostError("--repeat must be from 1 to \(Limits.maxCount) (got \(rounds))")
    }
    verbose = command.verbose || flag(nil, "verbose", "v") == true
    output = command.tap ? "TAP" : command.output ?? given("output", "o")?.first ?? "utfTerminal"
    outputOptions = commas(list(command.outputOptions, "Xoutput"))
    if !Self.reports.contains(output) && !command.list && flag(nil, "list", "l") != true {
      options.output = output
      options.outputArguments = outputOptions
    }
    options.enableSound = command.enableSound || flag(nil, "enable-sound", "s") == true
    options.verbose = verbose
    options.deferPrint = flag(nil, "defer-print") == true
    options.language = given("lang")?.first ?? "en"

    options.filter = list(command.filter, "filter")
    options.filterOut = list(command.filterOut, "filter-out")
    options.tags = commas(list(command.tags, "tags", "t"))
    options.excludeTags = commas(list(command.excludeTags, "exclude-tags"))
    if let tag = options.tags.first(where: options.excludeTags.contains) {
      throw HostError("cannot use --tags and --exclude-tags for the same tag ('\(tag)')")
    }
    let shuffle = command.shuffle || flag(nil, "shuffle") == true
    let seed = try number(command.seed, "seed")
    options.seed = seed ?? (shuffle ? Int.random(in: 1...2_147_483_646) : nil)
    options.timeout = command.timeout
    options.list = command.list || flag(nil, "list", "l") == true
    options.autoInsulate = flag(command.autoInsulate, "auto-insulate") ?? true
    options.suppressPending = command.suppressPending || flag(nil, "suppress-pending") == true
    let lpath = list(command.lpath, "lpath", "m")
    options.lpath = lpath.isEmpty ? "./src/?.lua;./src/?/?.lua;./src/?/init.lua" : lpath.joined(separator: ";")
    let cpath = list(command.cpath, "cpath")
    options.cpath = cpath.isEmpty ? "./csrc/?.so;./csrc/?/?.so;" : cpath.joined(separator: ";")
    options.statements = list(command.statements, "e")
    options.coverage = command.coverage || flag(nil, "coverage", "c") == true
    options.coverageConfig = command.coverageConfigFile ?? given("coverage-config-file")?.first
    options.helper = command.helper ?? given("helper")?.first ?? ""
    options.helperArguments = commas(list(command.helperOptions, "Xhelper"))
    options.program = Self.executable
    options.interpreter = Self.luaInterpreter ?? Self.executable
    options.arguments = Array(CommandLine.arguments.drop { $0 != "test" }.dropFirst())
  }

  /// taskrun's own path (what `arg[0]` names, as busted's does).
  static let executable =
    (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe"))
    ?? CommandLine.arguments[0]

  /// `arg[-1]`: the Lua interpreter on PATH that a spec may start again (busted runs under
  /// `lua`), else taskrun itself.
  static let luaInterpreter: String? = {
    let folders = (Environment.variable("PATH") ?? "").split(separator: ":")
    for name in ["lua5.4", "lua"] {
      for folder in folders {
        let path = "\(folder)/\(name)"
        if access(path, X_OK) == 0 { return path }
      }
    }
    return nil
  }()

  /// The spec files, as busted finds them: a ROOT that is a file is taken as it is; a folder
  /// is searched (recursively) for names that match a pattern and no exclude pattern, not
  /// hidden, sorted; only .lua files load. A file named twice runs once.
  func files(_ host: ScriptHost) throws -> [String] {
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
        if root.hasSuffix(".lua") { files.append(root) }
        continue
      }
      let found = ((try? manager.subpathsOfDirectory(atPath: root)) ?? [])
        .filter { relative in
          let name = relative.split(separator: "/").last.map(String.init) ?? relative
          guard name.hasSuffix(".lua"), !relative.split(separator: "/").contains(where: { $0.hasPrefix(".") }) else {
            return false
          }
          return !host.fileName(name, matches: excludes) && host.fileName(name, matches: patterns)
        }
        .map { root.hasSuffix("/") ? root + $0 : root + "/" + $0 }
        .filter { !Self.isDirectory($0) }
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
  /// handler in Lua (gtest, sound, a .lua file, a module: busted/handlers.lua).
  static let reports: Set<String> = ["utfTerminal", "plainTerminal", "TAP", "json", "junit"]

  /// The report -o names (busted's output names; --tap is -o TAP). A Lua handler prints its
  /// own report: taskrun's says nothing (what tests print still shows) unless the handler does
  /// not load (`LuaHandlerReport.fallback`).
  func report(verbose: Bool, color: ColorPolicy) throws -> any TestReport {
    if options.list { return ListReport() }
    switch output {
    case "utfTerminal", "plainTerminal":
      // busted's terminal handlers take -Xoutput --color and --plain, and refuse the rest
      var color = color
      for option in outputOptions {
        switch option {
        case "--color": color = ColorPolicy(enabled: true)
        case "--plain": color = ColorPolicy(enabled: false)
        default:
          throw HostError(
            option.hasPrefix("-")
              ? "\(output) output handler: unknown/bad flag: \(option)"
              : "\(output) output handler: bad number of arguments: 0 argument(s) must be specified, not 1")
        }
      }
      return TestReporter(verbose: verbose, color: color, marks: output == "utfTerminal" ? .utf : .plain)
    case "TAP": return TapReporter()
    case "json": return JSONTestReport()
    case "junit": return try JUnitReport.open(path: outputOptions.first ?? "-")
    default: return LuaHandlerReport()
    }
  }

  static func isDirectory(_ path: String) -> Bool {
    var info = stat()
    return stat(path, &info) == 0 && info.st_mode & S_IFMT == S_IFDIR
  }
}
