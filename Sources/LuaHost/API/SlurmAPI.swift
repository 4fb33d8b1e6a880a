// SlurmAPI: a queue's `executor = "slurm"` and `slurm = { … }`, and --executor.
import CLua
import CLuaShim
import FoundationEssentials
import TaskEngine

extension ScriptHost {
  static let slurmFields = ["partition", "account", "cpus", "mem", "time", "extra"]

  /// The queue's executor from its spec table at `index` (nil: this machine), given the
  /// command line's `--executor` (`executorChoice`): the engine makes it (SlurmExecutors).
  func queueExecutor(_ s: LuaStack, _ index: Int32, in what: String) throws -> (any CommandExecutor)? {
    let asked = try optionalString(s, index, "executor", in: what)
    if let asked, asked != "local", asked != "slurm" {
      throw ScriptError("\(what): executor must be \"local\" or \"slurm\" (got '\(asked)')")
    }
    let placement = try slurmPlacement(s, index, in: what)
    if commandSandbox != nil, Scheduler.runsOnSlurm(asked: asked, choice: executorChoice) {
      throw ScriptError(
        "\(what): --sandbox cannot confine commands run on Slurm, so it refuses them: "
          + "run this queue here (executor = \"local\"), or run with --sandbox=lua")
    }
    do {
      return try scheduler.executor(
        asked: asked, choice: executorChoice, placement: placement ?? SlurmPlacement(),
        tag: slurmTag)
    } catch {
      throw ScriptError("\(what): \(error)")
    }
  }

  /// `slurm = { partition =, account =, cpus =, mem =, time =, extra = { … } }`, or nil.
  func slurmPlacement(_ s: LuaStack, _ index: Int32, in what: String) throws -> SlurmPlacement? {
    guard s.rawGet(index, "slurm") != LUA_TNIL else { s.pop(); return nil }
    defer { s.pop() }
    let table = s.top
    guard s.type(table) == LUA_TTABLE else {
      throw ScriptError("\(what): field 'slurm' must be a table (got \(s.typeName(table)))")
    }
    let where_ = "\(what): slurm"
    try checkFields(s, table, valid: Self.slurmFields, in: where_)
    var placement = SlurmPlacement()
    placement.partition = try optionalString(s, table, "partition", in: where_)
    placement.account = try optionalString(s, table, "account", in: where_)
    if let cpus = try optionalNumber(s, table, "cpus", in: where_) {
      placement.cpus = try count(cpus, "cpus", 1...Limits.maxCount, in: where_)
    }
    if let memory = try optionalString(s, table, "mem", in: where_) {
      let digits = memory.last.map { "KMGT".contains($0) } == true ? memory.dropLast() : Substring(memory)
      guard !digits.isEmpty, digits.allSatisfy({ "0123456789".contains($0) }) else {
        throw ScriptError("\(where_): mem must be a number of megabytes or end in K, M, G or T (got '\(memory)')")
      }
      placement.memory = memory
    }
    if s.rawGet(table, "time") != LUA_TNIL {
      defer { s.pop() }
      guard let time = s.stringOrNumber(-1), !time.isEmpty, time.allSatisfy({ "0123456789:-".contains($0) }) else {
        throw ScriptError("\(where_): time must be minutes or [days-]hours:minutes:seconds, as Slurm spells it")
      }
      placement.time = time
    } else {
      s.pop()
    }
    if s.rawGet(table, "extra") != LUA_TNIL {
      defer { s.pop() }
      let extra = s.top
      guard s.type(extra) == LUA_TTABLE else { throw ScriptError("\(where_): extra must be a list of options") }
      placement.extra = try (0..<s.rawLength(extra)).map { i in
        s.rawGet(extra, i + 1)
        defer { s.pop() }
        guard let option = s.string(-1), option.hasPrefix("-") else {
          throw ScriptError("\(where_): extra must be a list of options such as \"--constraint=avx512\"")
        }
        return option
      }
    } else {
      s.pop()
    }
    return placement
  }

  /// `--executor slurm|local`: the default for queues that do not name one (main_queue too);
  /// `local` runs everything here. Throws when Slurm cannot be used.
  public func chooseExecutor(_ choice: String) throws {
    executorChoice = choice
    guard choice == "slurm" else { return }
    do {
      scheduler.mainQueue.executor = try scheduler.slurmExecutor(SlurmPlacement(), tag: slurmTag)
    } catch {
      throw ScriptError("--executor slurm: \(error)")
    }
  }
}
