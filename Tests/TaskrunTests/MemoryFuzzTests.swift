// Seeded randomized tests of the run store (.taskrun/): random graphs and edits checked against an oracle, and kill -9 then --resume.
//
// graphsRunWhatTheOracleSays: random DAGs of `sh` operations that cat their inputs (sources,
// a glob, a folder, upstream outputs) into out/NAME.txt (or its byte count, so that a changed
// input can make the same output), run with -k at -j1 to -j4. Between runs, random edits: a
// source changed, or rewritten unchanged; a glob match or a file of the folder added or
// removed; a file no input names written; an output deleted, rewritten unchanged or
// corrupted; a command edited, broken (it fails) or mended; `inputs` listing upstream outputs
// or not; a -B or --no-store run. An oracle that models every file's contents (early cutoff
// included) says which operations run, each outcome, the exit code and what each output
// holds; ran.log (each command appends its name) must agree, and `-n` must say "would run"
// of exactly what must run and what an upstream that would run feeds.
// killedRunsResume: a run of sleeping operations at -j2/-j3 (cold, or after an edit to a
// completed run) gets SIGKILL (sometimes SIGINT or SIGTERM) at a random moment, sometimes
// its --resume too; the store must pass PRAGMA integrity_check (sqlite3), and `--resume`
// (sometimes a plain run) must run exactly what had to run less what the stopped runs
// recorded as succeeded (those are `resumed` or `up_to_date`), with every output right.
//
// Each test runs cases with seeds first, first+1, … for TASKRUN_MEMORY_FUZZ_SECONDS seconds
// (default 20; at least one case) and prints what they met. The first seed is printed and a
// failure names its case's seed, which TASKRUN_MEMORY_FUZZ_SEED replays (as the first case):
//   TASKRUN_MEMORY_FUZZ_SECONDS=900 swift test --filter MemoryFuzzTests        # longer
//   TASKRUN_MEMORY_FUZZ_SEED=42 swift test --filter MemoryFuzzTests            # replay a seed
import Foundation
import TestSupport
import Testing

@Suite(.serialized) struct MemoryFuzzTests {
  static let environment = ProcessInfo.processInfo.environment
  static let budget = environment["TASKRUN_MEMORY_FUZZ_SECONDS"].flatMap(Double.init) ?? 20

  /// Runs `body` with seeds first, first+1, … until the budget is spent (at least once) or a
  /// case fails (`body` returns false).
  static func cases(_ test: String, _ body: (UInt64, Tally) throws -> Bool) rethrows {
    let first = SplitMix64.seeded(by: "TASKRUN_MEMORY_FUZZ_SEED", for: "MemoryFuzzTests.\(test)").state
    let deadline = Date().addingTimeInterval(budget)
    var seed = first, count = 0
    let tally = Tally()
    repeat {
      let passed = try body(seed, tally)
      count += 1
      if !passed { return }
      seed &+= 1
    } while Date() < deadline
    print("MemoryFuzzTests.\(test): \(count) cases from seed \(first) passed (\(tally))")
  }

  // MARK: Randomized graphs against an oracle

  @Test func graphsRunWhatTheOracleSays() throws {
    try Self.cases("graphsRunWhatTheOracleSays") { seed, tally in
      var one = try GraphCase(seed: seed)
      return try one.check(tally)
    }
  }

  // MARK: kill -9, then resume

  @Test func killedRunsResume() throws {
    try Self.cases("killedRunsResume") { seed, tally in
      var one = try CrashCase(seed: seed)
      return try one.check(tally)
    }
  }
}

// MARK: - Shared helpers

/// How often the cases met each situation, printed at the end (to see what they exercised).
final class Tally: CustomStringConvertible {
  private var counts: [String: Int] = [:]
  func add(_ what: String, _ n: Int = 1) { counts[what, default: 0] += n }
  var description: String { counts.sorted { $0.key < $1.key }.map { "\($0.key): \($0.value)" }.joined(separator: ", ") }
}

/// Names sorted as o0, o1, …, o10 (not o1, o10, o2).
private func show(_ names: some Sequence<String>) -> String {
  let sorted = names.sorted { (Int($0.dropFirst()) ?? 0, $0) < (Int($1.dropFirst()) ?? 0, $1) }
  return "{" + sorted.joined(separator: ", ") + "}"
}

/// A line of random lowercase letters and its newline.
private func line(_ rng: inout SplitMix64, length: Int) -> String {
  String((0..<length).map { _ in Character(UnicodeScalar(UInt8(97 + rng.int(0...25)))) }) + "\n"
}

/// Writes `text` to `path` under `folder`: atomically (a new inode) or in place.
private func put(_ text: String, _ path: String, in folder: URL, atomically: Bool = true) throws {
  let url = folder.appendingPathComponent(path)
  try FileManager.default.createDirectory(
    at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
  if atomically {
    try text.write(to: url, atomically: true, encoding: .utf8)
  } else {
    try Data(text.utf8).write(to: url)
  }
}

private func contents(_ path: String, in folder: URL) -> String? {
  try? String(contentsOf: folder.appendingPathComponent(path), encoding: .utf8)
}

/// The marker lines the commands appended to ran.log (nil: no file).
private func markers(in folder: URL) -> [String]? {
  contents("ran.log", in: folder).map { $0.split(separator: "\n").map(String.init) }
}

/// Each op_finish event of an --events file: operation → (outcome, why), and how many there were.
private func finishes(_ url: URL) -> (outcomes: [String: (outcome: String, why: String?)], count: Int) {
  var outcomes: [String: (String, String?)] = [:]
  var count = 0
  let text = (try? String(contentsOf: url, encoding: .utf8)) ?? ""
  for line in text.split(separator: "\n") {
    guard let event = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
      event["event"] as? String == "op_finish", let name = event["operation"] as? String,
      let outcome = event["outcome"] as? String
    else { continue }
    outcomes[name] = (outcome, event["why"] as? String)
    count += 1
  }
  return (outcomes, count)
}

/// `sqlite3 [-readonly] STORE SQL`: its exit status and output lines.
private func sqlite(_ store: URL, _ sql: String, readOnly: Bool = true) throws -> (status: Int32, lines: [String]) {
  let result = try Child.output(["sqlite3"] + (readOnly ? ["-readonly"] : []) + [store.path, sql])
  return (result.status, result.stdout.split(separator: "\n").map(String.init))
}

/// The run store of the folder's workflow.lua: `.taskrun/workflow.lua.db` (one per script;
/// `.taskrun/store.db` before that), else the one database there (nil: none yet).
private func storeFile(in folder: URL) -> URL? {
  let dir = folder.appendingPathComponent(".taskrun")
  let names = (try? FileManager.default.contentsOfDirectory(atPath: dir.path)) ?? []
  let databases = names.filter { $0.hasSuffix(".db") }
  let name =
    ["workflow.lua.db", "store.db"].first(where: databases.contains) ?? (databases.count == 1 ? databases[0] : nil)
  return name.map { dir.appendingPathComponent($0) }
}

/// The tail of a run's output, for a failure message.
private func tail(_ run: Run) -> String {
  "exit \(run.status)\n--- stdout (end) ---\n\(run.stdout.suffix(2500))\n--- stderr (end) ---\n\(run.stderr.suffix(1500))"
}

// MARK: - Test 1: random graphs and edits against an oracle

/// One operation of a random graph.
private struct GraphOp {
  var name: String
  /// Declares inputs and outputs (else it always runs and makes nothing).
  var declares = true
  /// Plain source files it reads, in order.
  var sources: [String] = []
  /// Whether it reads (and declares) the glob src/g*.txt.
  var glob = false
  /// Whether it reads every file of the folder src/d (declared as the folder).
  var folder = false
  /// Its dependencies (indices of earlier operations), in order.
  var deps: [Int] = []
  /// Whether its `inputs` list its upstream operations' outputs too.
  var listsUpstream = false
  /// Its output is the byte count of what it reads (`| wc -c`), not the bytes themselves.
  var counts = false
  /// `true; ` prefixes: a command edit that changes nothing it makes.
  var trues = 0
  /// 0: works; 1: writes its output, then exits 3; 2: removes its output and exits 0.
  var broken = 0

  var output: String { "out/\(name).txt" }
}

/// What the oracle remembers of an operation's last success.
private struct Remembered: Equatable {
  var command: String
  var inputs: [String: String]
  var upstream: [String: String]
  var output: String
}

/// What the oracle says became of an operation in one run.
private enum Fate: String {
  case succeeded, failed, skipped
  case upToDate = "up_to_date"
}

private struct GraphCase {
  let seed: UInt64
  var rng: SplitMix64
  var ops: [GraphOp] = []
  /// Every file under src/ and out/ as it is on disk: path → contents (absent: no file).
  var disk: [String: String] = [:]
  var remembered: [Int: Remembered] = [:]
  var folder: URL
  var nextGlob = 1
  /// Files the test writes are dated minutes back (see `age`).
  var aged = false
  var nextFolderFile = 1

  static let globPattern = "src/g*.txt"
  static let folderInput = "src/d"

  init(seed: UInt64) throws {
    self.seed = seed
    rng = SplitMix64(state: seed)
    folder = try Scratch.folder("memory-fuzz-graph", [:])
  }

  /// Sources of the glob (sorted, as both sh and taskrun expand it).
  var globFiles: [String] {
    disk.keys.filter { $0.hasPrefix("src/g") && $0.hasSuffix(".txt") && !$0.dropFirst(4).contains("/") }.sorted()
  }
  var plainSources: [String] {
    disk.keys.filter { $0.hasPrefix("src/s") && $0.hasSuffix(".txt") && Int($0.dropFirst(5).dropLast(4)) != nil }
      .sorted()
  }
  /// The files of the folder src/d (sorted, as both sh and taskrun list them).
  var folderFiles: [String] { disk.keys.filter { $0.hasPrefix(Self.folderInput + "/") }.sorted() }

  mutating func make() throws {
    for k in 1...rng.int(3...7) { try write(line(&rng, length: rng.int(2...12)), "src/s\(k).txt") }
    for _ in 1...rng.int(1...3) { try addGlobFile() }
    for _ in 1...rng.int(1...2) { try addFolderFile() }
    try FileManager.default.createDirectory(
      at: folder.appendingPathComponent("out"), withIntermediateDirectories: true)
    let count = rng.int(5...25)
    let loner = rng.chance(0.5) ? rng.int(0...count - 1) : -1
    let sources = plainSources
    for i in 0..<count {
      var op = GraphOp(name: "o\(i)")
      op.declares = i != loner
      if i > 0 {
        for _ in 0..<rng.int(0...3) {
          let dep = rng.int(0...i - 1)
          if !op.deps.contains(dep) { op.deps.append(dep) }
        }
      }
      if op.declares {
        op.glob = rng.chance(0.3)
        op.folder = rng.chance(0.2)
        for _ in 0..<rng.int(op.glob || op.folder ? 0...2 : 1...3) {
          let source = rng.pick(sources)
          if !op.sources.contains(source) { op.sources.append(source) }
        }
        op.listsUpstream = rng.chance(0.5)
        op.counts = rng.chance(0.25)
      }
      ops.append(op)
    }
  }

  // MARK: The files, on disk and in the model together

  mutating func write(_ text: String, _ path: String, atomically: Bool = true) throws {
    try put(text, path, in: folder, atomically: atomically)
    disk[path] = text
    if aged { try age(path) }
  }

  /// Sets the file's modification time minutes back (each time another), as if written long
  /// before the run: taskrun then trusts its stat, and does not hash it while the stat stays.
  mutating func age(_ path: String) throws {
    let when = Date(timeIntervalSinceNow: -Double(rng.int(5_000_000...600_000_000)) / 1_000_000)
    try FileManager.default.setAttributes(
      [.modificationDate: when], ofItemAtPath: folder.appendingPathComponent(path).path)
  }

  mutating func remove(_ path: String) throws {
    try FileManager.default.removeItem(at: folder.appendingPathComponent(path))
    disk[path] = nil
  }

  mutating func addFolderFile() throws {
    let path = String(format: "\(Self.folderInput)/f%02ld.txt", nextFolderFile)
    nextFolderFile += 1
    try write(line(&rng, length: rng.int(2...12)), path)
  }

  mutating func addGlobFile() throws {
    let path = String(format: "src/g%02ld.txt", nextGlob)
    nextGlob += 1
    try write(line(&rng, length: rng.int(2...12)), path)
  }

  // MARK: The script

  /// The files an operation reads, in the order its command names them (the glob expanded).
  func reads(_ op: GraphOp) -> [String] {
    op.sources + (op.glob ? globFiles : []) + (op.folder ? folderFiles : [])
      + op.deps.filter { ops[$0].declares }.map { ops[$0].output }
  }

  func command(_ op: GraphOp) -> String {
    var parts = ["echo \(op.name) >> ran.log"] + Array(repeating: "true", count: op.trues)
    guard op.declares else { return parts.joined(separator: "; ") }
    let names =
      op.sources + (op.glob ? [Self.globPattern] : []) + (op.folder ? [Self.folderInput + "/*"] : [])
      + op.deps.filter { ops[$0].declares }.map { ops[$0].output }
    if op.broken == 2 {
      parts.append("rm -f \(op.output)")
    } else {
      parts.append("cat \(names.joined(separator: " "))\(op.counts ? " | wc -c" : "") > \(op.output)")
    }
    if op.broken == 1 { parts.append("exit 3") }
    return parts.joined(separator: "; ")
  }

  /// The paths (and the glob) its `inputs` declare.
  func declaredInputs(_ op: GraphOp) -> [String] {
    op.sources + (op.glob ? [Self.globPattern] : []) + (op.folder ? [Self.folderInput] : [])
      + (op.listsUpstream ? op.deps.filter { ops[$0].declares }.map { ops[$0].output } : [])
  }

  func script() -> String {
    func list(_ items: [String]) -> String {
      items.count == 1 ? "\"\(items[0])\"" : "{ " + items.map { "\"\($0)\"" }.joined(separator: ", ") + " }"
    }
    var text = "-- MemoryFuzzTests graph, seed \(seed)\n"
    for op in ops {
      var fields = ["name = \"\(op.name)\"", "sh = [[\(command(op))]]"]
      if op.declares {
        fields.append("inputs = \(list(declaredInputs(op)))")
        fields.append("outputs = \"\(op.output)\"")
      }
      if !op.deps.isEmpty {
        fields.append("after = { " + op.deps.map { "\"\(ops[$0].name)\"" }.joined(separator: ", ") + " }")
      }
      text += "operation { " + fields.joined(separator: ", ") + " }\n"
    }
    return text
  }

  // MARK: The oracle

  /// What it makes from the files as they are now.
  func made(_ op: GraphOp) -> String {
    let bytes = reads(op).map { disk[$0] ?? "" }.joined()
    return op.counts ? "\(bytes.utf8.count)\n" : bytes
  }

  func inputsNow(_ op: GraphOp) -> [String: String] {
    var inputs: [String: String] = [:]
    for path in op.sources + (op.glob ? globFiles : []) + (op.folder ? folderFiles : [])
      + (op.listsUpstream ? op.deps.filter { ops[$0].declares }.map { ops[$0].output } : [])
    {
      inputs[path] = disk[path] ?? "<missing>"
    }
    return inputs
  }

  func upstreamNow(_ op: GraphOp) -> [String: String] {
    var upstream: [String: String] = [:]
    for dep in op.deps where ops[dep].declares { upstream[ops[dep].name] = disk[ops[dep].output] ?? "<missing>" }
    return upstream
  }

  /// Why a declaring operation must run with the files as they are now (nil: up to date).
  func mustRun(_ i: Int) -> String? {
    let op = ops[i]
    guard let last = remembered[i] else { return "never succeeded" }
    if last.command != command(op) { return "command changed" }
    if last.inputs != inputsNow(op) { return "inputs changed" }
    if last.upstream != upstreamNow(op) { return "upstream output changed" }
    guard let output = disk[op.output] else { return "output missing" }
    if output != last.output { return "output changed" }
    return nil
  }

  /// Runs the graph in the model (as `taskrun -k` would): each operation's fate and why.
  mutating func simulate(always: Bool, store: Bool) -> [String: (fate: Fate, why: String)] {
    var fates: [String: (fate: Fate, why: String)] = [:]
    for i in ops.indices {
      let op = ops[i]
      if let dep = op.deps.first(where: { [.failed, .skipped].contains(fates[ops[$0].name]?.fate) }) {
        fates[op.name] = (.skipped, "dependency \(ops[dep].name) \(fates[ops[dep].name]!.fate)")
        continue
      }
      guard op.declares else {
        fates[op.name] = (.succeeded, "declares nothing")
        continue
      }
      let why = !store ? "--no-store" : always ? "-B" : mustRun(i)
      guard let why else {
        fates[op.name] = (.upToDate, "up to date")
        continue
      }
      if op.broken != 0 {
        // A failed attempt's changed output is removed; a missing one fails the success.
        disk[op.output] = nil
        fates[op.name] = (.failed, why + ", and its command is broken")
        continue
      }
      let output = made(op)
      if store {
        remembered[i] = Remembered(
          command: command(op), inputs: inputsNow(op), upstream: upstreamNow(op), output: output)
      }
      disk[op.output] = output
      fates[op.name] = (.succeeded, why)
    }
    return fates
  }

  /// What `-n` would say runs: what must run, and what an upstream that would run feeds.
  func predict() -> Set<String> {
    var runs = Set<String>()
    for i in ops.indices {
      let op = ops[i]
      if !op.declares || op.deps.contains(where: { ops[$0].declares && runs.contains(ops[$0].name) })
        || mustRun(i) != nil
      {
        runs.insert(op.name)
      }
    }
    return runs
  }

  // MARK: Edits

  /// Applies one random edit; returns what it did.
  mutating func edit() throws -> String {
    let declaring = ops.indices.filter { ops[$0].declares }
    switch rng.int(0...16) {
    case 0, 1:
      let path = rng.pick(plainSources + globFiles + folderFiles)
      let old = disk[path]!
      let sameLength = rng.chance(0.5)
      var text = old
      while text == old { text = line(&rng, length: sameLength ? old.utf8.count - 1 : rng.int(2...12)) }
      try write(text, path, atomically: rng.chance(0.5))
      return "changed \(path) (\(sameLength ? "same length" : "new length"))"
    case 2:
      let path = rng.pick(plainSources + globFiles + folderFiles)
      let atomically = rng.chance(0.5)
      try write(disk[path]!, path, atomically: atomically)
      return "rewrote \(path) unchanged (\(atomically ? "new inode" : "in place"))"
    case 3:
      try addGlobFile()
      return "added \(globFiles.last!) (matches \(Self.globPattern))"
    case 4:
      let files = globFiles
      guard files.count > 1 else { return "nothing (would remove the last glob match)" }
      let path = rng.pick(files)
      try remove(path)
      return "removed \(path) (matched \(Self.globPattern))"
    case 5:
      let path = rng.pick(["src/sub/g01.txt", "src/h1.txt", "src/g1.dat", "src/sx.txt.bak", "other.txt"])
      try write(line(&rng, length: rng.int(2...12)), path)
      return "wrote \(path) (no input names it)"
    case 6:
      let present = declaring.filter { disk[ops[$0].output] != nil }
      guard !present.isEmpty else { return "nothing (no output to delete)" }
      let op = ops[rng.pick(present)]
      try remove(op.output)
      return "deleted \(op.output)"
    case 7:
      let present = declaring.filter { disk[ops[$0].output] != nil }
      guard !present.isEmpty else { return "nothing (no output to corrupt)" }
      let op = ops[rng.pick(present)]
      try write("corrupt " + line(&rng, length: 6), op.output, atomically: rng.chance(0.5))
      return "corrupted \(op.output)"
    case 8:
      let present = declaring.filter { disk[ops[$0].output] != nil }
      guard !present.isEmpty else { return "nothing (no output to rewrite)" }
      let op = ops[rng.pick(present)]
      let atomically = rng.chance(0.5)
      try write(disk[op.output]!, op.output, atomically: atomically)
      return "rewrote \(op.output) unchanged (\(atomically ? "new inode" : "in place"))"
    case 9, 10:
      let i = rng.int(0...ops.count - 1)
      if ops[i].trues > 0 && rng.chance(0.4) {
        ops[i].trues -= 1
        return "removed a 'true;' from \(ops[i].name)'s command"
      }
      ops[i].trues += 1
      return "added a 'true;' to \(ops[i].name)'s command"
    case 11:
      let i = rng.pick(declaring)
      ops[i].broken = rng.int(1...2)
      return ops[i].broken == 1
        ? "broke \(ops[i].name) (writes its output, then exits 3)"
        : "broke \(ops[i].name) (removes its output, exits 0)"
    case 12:
      try addFolderFile()
      return "added \(folderFiles.last!) (in the folder \(Self.folderInput))"
    case 13:
      let files = folderFiles
      guard files.count > 1 else { return "nothing (would empty \(Self.folderInput))" }
      let path = rng.pick(files)
      try remove(path)
      return "removed \(path) (from the folder \(Self.folderInput))"
    case 14:
      let candidates = declaring.filter { i in ops[i].deps.contains { ops[$0].declares } }
      guard !candidates.isEmpty else { return "nothing (no operation reads an upstream output)" }
      let i = rng.pick(candidates)
      ops[i].listsUpstream.toggle()
      return ops[i].listsUpstream
        ? "\(ops[i].name)'s inputs now list its upstream outputs"
        : "\(ops[i].name)'s inputs no longer list its upstream outputs"
    default:
      return "nothing"
    }
  }

  // MARK: The test

  mutating func check(_ tally: Tally) throws -> Bool {
    aged = rng.chance(0.5)
    if aged { tally.add("cases with files dated back") }
    try make()
    let rounds = rng.int(5...10)
    for round in 0...rounds {
      var edits: [String] = []
      if round > 0 {
        if aged && rng.chance(0.5) {
          for path in disk.keys.sorted() where path.hasPrefix("out/") { try age(path) }
          edits.append("dated the outputs back")
        }
        for i in ops.indices where ops[i].broken != 0 && rng.chance(0.6) {
          ops[i].broken = 0
          edits.append("mended \(ops[i].name)")
        }
        for _ in 0..<rng.int(0...3) { edits.append(try edit()) }
        if edits.isEmpty { edits.append("nothing") }
      }
      try put(script(), "graph.lua", in: folder)
      let broken = ops.contains { $0.broken != 0 }
      let mode = round == 0 ? "" : rng.chance(0.06) ? "-B" : !broken && rng.chance(0.06) ? "--no-store" : ""
      let (seed, folder, aged) = (self.seed, self.folder, self.aged)
      let context = { () -> String in
        "seed \(seed) (TASKRUN_MEMORY_FUZZ_SEED=\(seed) replays it), round \(round) of \(rounds)"
          + (aged ? ", the test's files dated back" : "") + (mode.isEmpty ? "" : " (\(mode))")
          + "\nedits: \(edits.joined(separator: "; "))\nfolder: \(folder.path)"
      }

      // -n first, sometimes: it predicts, and runs and changes nothing.
      try? FileManager.default.removeItem(at: folder.appendingPathComponent("ran.log"))
      if round > 0 && mode.isEmpty && rng.chance(0.3) {
        let dry = try Binary.run(["-n", "graph.lua"], in: folder)
        var said: Set<String> = []
        for text in dry.stdout.split(separator: "\n") where text.contains(" — would run: ") {
          let words = text.split(separator: " ")
          if words.count > 1, words[0].hasSuffix("."), Int(words[0].dropLast()) != nil { said.insert(String(words[1])) }
        }
        let predicted = predict()
        tally.add("-n checks")
        if dry.status != 0 || said != predicted || markers(in: folder) != nil {
          Issue.record(
            Comment(
              rawValue:
                "taskrun -n: \(context())\nexpected to say would run: \(show(predicted))\nit said would run:         \(show(said))\nonly expected: \(show(predicted.subtracting(said))), only said: \(show(said.subtracting(predicted)))\nran.log: \(markers(in: folder) ?? [])\n\(tail(dry))"
            ))
          return false
        }
      }

      // The run, and what the oracle says of it.
      let events = folder.appendingPathComponent("events-\(round).jsonl")
      let jobs = rng.int(1...4)
      let run = try Binary.run(
        ["-k", "-j\(jobs)", "--events", events.path] + (mode.isEmpty ? [] : [mode]) + ["graph.lua"], in: folder)
      let fates = simulate(always: mode == "-B", store: mode != "--no-store")
      let finished = finishes(events)
      let expectedRan = Set(fates.filter { [.succeeded, .failed].contains($0.value.fate) }.keys)
      let actualRan = Set(finished.outcomes.filter { ["succeeded", "failed"].contains($0.value.outcome) }.keys)
      let logged = markers(in: folder) ?? []
      let status: Int32 = fates.values.contains { $0.fate == .failed } ? 1 : 0
      var problems: [String] = []
      if run.status != status { problems.append("exit \(run.status), expected \(status)") }
      if finished.count != ops.count || finished.outcomes.count != ops.count {
        problems.append("\(finished.count) op_finish events for \(finished.outcomes.count) of \(ops.count) operations")
      }
      if actualRan != expectedRan {
        problems.append(
          "the operations that ran differ\n  expected (oracle): \(show(expectedRan))\n  ran (events):      \(show(actualRan))\n  only expected: \(show(expectedRan.subtracting(actualRan))), only ran: \(show(actualRan.subtracting(expectedRan)))"
        )
      }
      if logged.count != Set(logged).count || Set(logged) != expectedRan {
        problems.append("ran.log says \(show(logged)) ran (\(logged.count) lines), expected \(show(expectedRan))")
      }
      for op in ops {
        let expected = fates[op.name]!
        let actual = finished.outcomes[op.name]
        if actual?.outcome != expected.fate.rawValue {
          problems.append(
            "\(op.name): outcome \(actual?.outcome ?? "none") (why: \(actual?.why ?? "-")), expected \(expected.fate.rawValue) (oracle: \(expected.why))"
          )
        }
        if op.declares, contents(op.output, in: folder) != disk[op.output] {
          problems.append(
            "\(op.output) holds \(contents(op.output, in: folder).map { "\($0.debugDescription)" } ?? "nothing (missing)"), expected \(disk[op.output].map { "\($0.debugDescription)" } ?? "no file")"
          )
        }
      }
      tally.add("runs")
      if !mode.isEmpty { tally.add("\(mode) runs") }
      for op in ops {
        let fate = fates[op.name]!.fate
        tally.add("ops \(fate.rawValue)")
        // Early cutoff: up to date though an upstream it reads ran.
        if fate == .upToDate, op.deps.contains(where: { ops[$0].declares && fates[ops[$0].name]!.fate == .succeeded }) {
          tally.add("early cutoffs")
        }
      }
      if !problems.isEmpty {
        Issue.record(
          Comment(
            rawValue:
              "taskrun -k -j\(jobs) \(mode) graph.lua: \(context())\n\(problems.joined(separator: "\n"))\n--- graph.lua ---\n\(script())\(tail(run))"
          ))
        return false
      }
    }
    return true
  }
}

// MARK: - Test 2: kill -9 at a random moment, then --resume

private struct CrashOp {
  var name: String
  var sources: [String]
  var deps: [Int]
  var sleep: Int  // hundredths of a second
  var output: String { "out/\(name).txt" }
}

private struct CrashCase {
  let seed: UInt64
  var rng: SplitMix64
  var ops: [CrashOp] = []
  var sources: [String: String] = [:]
  var folder: URL

  init(seed: UInt64) throws {
    self.seed = seed
    rng = SplitMix64(state: seed)
    folder = try Scratch.folder("memory-fuzz-crash", [:])
  }

  func reads(_ op: CrashOp) -> [String] { op.sources + op.deps.map { ops[$0].output } }

  /// Each output as it must be once everything ran.
  func expected() -> [String: String] {
    var made: [String: String] = [:]
    for op in ops { made[op.output] = reads(op).map { sources[$0] ?? made[$0] ?? "" }.joined() }
    return made
  }

  func script() -> String {
    var text = "-- MemoryFuzzTests crash graph, seed \(seed)\n"
    for op in ops {
      let sleep = String(format: "0.%02ld", op.sleep)
      let inputs = reads(op).map { "\"\($0)\"" }.joined(separator: ", ")
      let after =
        op.deps.isEmpty ? "" : ", after = { " + op.deps.map { "\"\(ops[$0].name)\"" }.joined(separator: ", ") + " }"
      text += """
        operation { name = "\(op.name)", sh = [[sleep \(sleep); echo \(op.name) >> ran.log; cat \(reads(op).joined(separator: " ")) > \(op.output)]], \
        inputs = { \(inputs) }, outputs = "\(op.output)"\(after) }

        """
    }
    return text
  }

  /// The operations that read `changed` sources, and everything downstream of them.
  func affected(by changed: Set<String>) -> Set<String> {
    var names = Set<String>()
    for op in ops
    where !changed.isDisjoint(with: op.sources) || op.deps.contains(where: { names.contains(ops[$0].name) }) {
      names.insert(op.name)
    }
    return names
  }

  mutating func check(_ tally: Tally) throws -> Bool {
    for k in 1...rng.int(3...5) { sources["src/s\(k).txt"] = line(&rng, length: rng.int(2...12)) }
    for (path, text) in sources { try put(text, path, in: folder) }
    try FileManager.default.createDirectory(at: folder.appendingPathComponent("out"), withIntermediateDirectories: true)
    let names = sources.keys.sorted()
    for i in 0..<rng.int(12...20) {
      var op = CrashOp(name: "o\(i)", sources: [], deps: [], sleep: rng.int(5...30))
      for _ in 0..<rng.int(1...2) {
        let source = rng.pick(names)
        if !op.sources.contains(source) { op.sources.append(source) }
      }
      if i > 0 {
        for _ in 0..<rng.int(0...3) {
          let dep = rng.int(max(0, i - 6)...i - 1)
          if !op.deps.contains(dep) { op.deps.append(dep) }
        }
      }
      ops.append(op)
    }
    try put(script(), "workflow.lua", in: folder)
    let all = Set(ops.map(\.name))
    let jobs = rng.int(2...3)

    // Warm: a complete run first, then an edit: only what it affects may run.
    let warm = rng.chance(0.4)
    var mustRun = all
    var story = "\(ops.count) operations at -j\(jobs), "
    if warm {
      let first = try Binary.run(["-j\(jobs)", "workflow.lua"], in: folder)
      guard first.status == 0 else {
        Issue.record("seed \(seed): the first, complete run failed\n\(tail(first))")
        return false
      }
      var changed = Set<String>()
      for _ in 0..<rng.int(1...2) {
        let path = rng.pick(names)
        var text = sources[path]!
        while text == sources[path]! { text = line(&rng, length: rng.int(2...12)) }
        sources[path] = text
        try put(text, path, in: folder)
        changed.insert(path)
      }
      mustRun = affected(by: changed)
      story +=
        "warm (a complete run, then \(changed.sorted().joined(separator: " and ")) changed: \(show(mustRun)) must run)"
      try FileManager.default.removeItem(at: folder.appendingPathComponent("ran.log"))
    } else {
      story += "cold"
    }

    // The run, killed; sometimes its --resume is killed too.
    let (seed, folder) = (self.seed, self.folder)
    let context = { (what: String) -> String in
      "seed \(seed) (TASKRUN_MEMORY_FUZZ_SEED=\(seed) replays it): \(what)\n\(story)\nfolder: \(folder.path)"
    }
    var recorded = Set<String>()  // recorded succeeded by a killed run
    var killedLog: [String] = []  // ran in a killed run
    var anyRun = false
    var problems: [String] = []
    let kills = rng.chance(0.3) ? 2 : 1
    for kill in 1...kills {
      // 0–1.5 s; sometimes at once, before the run may be recorded.
      let delay = rng.chance(0.15) ? rng.int(0...20) : rng.int(0...1500)
      // Mostly SIGKILL; sometimes the stop of Ctrl-C or SIGTERM (exit 130: cancelled, recorded).
      let signal = rng.pick([SIGKILL, SIGKILL, SIGKILL, SIGINT, SIGTERM])
      let again = kill > 1 && anyRun
      let started = try Binary.start(
        (again ? ["--resume"] : []) + [
          "-j\(jobs)", "--events", folder.appendingPathComponent("events-killed-\(kill).jsonl").path, "workflow.lua"
        ], in: folder)
      let pid = started.child.pid
      usleep(useconds_t(delay) * 1000)
      Glibc.kill(pid, signal)
      let killed = Binary.finish(started, timeout: 30)
      // Its commands die with it (PR_SET_PDEATHSIG); give them a moment.
      usleep(500_000)
      let name = [SIGKILL: "SIGKILL", SIGINT: "SIGINT", SIGTERM: "SIGTERM"][signal]!
      story +=
        "\n\(again ? "taskrun --resume" : "taskrun") sent \(name) after \(delay) ms (exit \(killed.status)\(killed.status == 0 ? ": it had finished" : ""))"
      tally.add(killed.status == 0 ? "runs that finished before the signal" : "runs stopped by \(name)")
      guard [0, 128 + signal, 130].contains(killed.status) else {
        Issue.record(Comment(rawValue: context("the run to kill ended otherwise") + "\n" + tail(killed)))
        return false
      }

      // The store must be whole, and says what succeeded in the killed run.
      var succeeded = Set<String>()
      if let store = storeFile(in: folder) {
        var integrity = try sqlite(store, "PRAGMA integrity_check")
        if integrity.status != 0 {
          // Killed while it made the store (before WAL mode): a hot rollback journal, which a
          // read-only connection cannot roll back. A writer (as the next run) rolls it back.
          integrity = try sqlite(store, "PRAGMA integrity_check", readOnly: false)
          story += " (the store had a hot journal: killed as it was made)"
          tally.add("kills as the store was made")
        }
        guard integrity.status == 0, integrity.lines == ["ok"] else {
          Issue.record(Comment(rawValue: context("integrity_check after the kill says \(integrity)")))
          return false
        }
        // What it recorded succeeded: the operations whose last success (`records`) is of its run.
        let tables = try sqlite(store, "SELECT count(*) FROM sqlite_master WHERE name IN ('runs', 'records')")
        if tables.lines == ["2"] {
          let mine = try sqlite(
            store, "SELECT operation FROM records WHERE run = (SELECT max(id) FROM runs WHERE pid = \(pid))")
          let runs = try sqlite(store, "SELECT count(*) FROM runs")
          guard mine.status == 0, runs.status == 0 else {
            Issue.record(Comment(rawValue: context("sqlite3 could not read the store: \(mine), \(runs)")))
            return false
          }
          succeeded = Set(mine.lines)
          anyRun = runs.lines != ["0"]
        }
      }
      let log = markers(in: folder) ?? []
      try? FileManager.default.removeItem(at: folder.appendingPathComponent("ran.log"))
      story += ": ran \(show(log)) (ran.log), recorded succeeded \(show(succeeded))"
      if log.count != Set(log).count { problems.append("the killed run ran an operation twice") }
      if !Set(log).isSubset(of: mustRun) {
        problems.append("the killed run ran what was up to date: \(show(Set(log).subtracting(mustRun)))")
      }
      if !recorded.isDisjoint(with: log) {
        problems.append(
          "the killed --resume ran what an earlier run recorded succeeded: \(show(recorded.intersection(log)))")
      }
      if !succeeded.isSubset(of: Set(log).union(recorded).union(all.subtracting(mustRun))) {
        problems.append("recorded succeeded but never ran: \(show(succeeded.subtracting(log).subtracting(recorded)))")
      }
      recorded.formUnion(succeeded)
      if !anyRun { tally.add("kills before a run was recorded") }
      killedLog += log
    }

    // Resume (sometimes a plain run): what was recorded is reused, everything else runs.
    var resume = rng.chance(0.75)
    if resume && !anyRun {
      // Killed before it was recorded: there is nothing to resume, and taskrun says so.
      let refused = try Binary.run(["--resume", "workflow.lua"], in: folder)
      if refused.status != 2 || !refused.stderr.contains("no run is recorded") {
        problems.append("--resume with no run recorded: expected exit 2 and 'no run is recorded'\n\(tail(refused))")
      }
      story += "\n--resume: no run was recorded (exit \(refused.status)); a plain run instead"
      resume = false
    }
    let events = folder.appendingPathComponent("events-after.jsonl")
    let after = try Binary.run(
      (resume ? ["--resume"] : []) + ["-j\(jobs)", "--events", events.path, "workflow.lua"], in: folder)
    let finished = finishes(events)
    let ran = Set(finished.outcomes.filter { $0.value.outcome == "succeeded" }.keys)
    let afterLog = markers(in: folder) ?? []
    let expectedRan = mustRun.subtracting(recorded)
    story += "\nthen \(resume ? "taskrun --resume" : "a plain taskrun"): ran \(show(ran)) (ran.log: \(show(afterLog)))"
    if after.status != 0 { problems.append("it exited \(after.status), expected 0") }
    if ran != expectedRan {
      problems.append(
        "it ran \(show(ran)), expected \(show(expectedRan)) (what had to run, less what was recorded succeeded)\n  only expected: \(show(expectedRan.subtracting(ran))), only ran: \(show(ran.subtracting(expectedRan)))"
      )
    }
    if !mustRun.isSubset(of: ran.union(killedLog)) {
      problems.append("never ran in either run: \(show(mustRun.subtracting(ran.union(killedLog))))")
    }
    if !recorded.isDisjoint(with: afterLog) {
      problems.append("ran again though recorded succeeded before the kill: \(show(recorded.intersection(afterLog)))")
    }
    if afterLog.count != Set(afterLog).count || Set(afterLog) != ran {
      problems.append("ran.log after the kill (\(afterLog.count) lines) disagrees with the events")
    }
    for name in all {
      // What did not have to run is up to date, or with --resume resumed (when it succeeded in
      // the run resumed).
      let outcomes =
        expectedRan.contains(name) ? ["succeeded"] : resume ? ["resumed", "up_to_date"] : ["up_to_date"]
      if !outcomes.contains(finished.outcomes[name]?.outcome ?? "none") {
        problems.append(
          "\(name): outcome \(finished.outcomes[name].map { "\($0.outcome) (why: \($0.why ?? "-"))" } ?? "none"), expected \(outcomes.joined(separator: " or "))"
        )
      }
    }
    for (path, text) in expected() where contents(path, in: folder) != text {
      problems.append(
        "\(path) holds \(contents(path, in: folder)?.debugDescription ?? "nothing"), expected \(text.debugDescription)")
    }
    if let store = storeFile(in: folder) {
      let integrity = try sqlite(store, "PRAGMA integrity_check")
      if integrity.lines != ["ok"] { problems.append("integrity_check after it says \(integrity)") }
      let open = try sqlite(store, "SELECT id FROM runs WHERE outcome IS NULL")
      if open.lines != [] { problems.append("runs still without an outcome after it: \(open.lines)") }
    } else {
      problems.append("no run store in \(folder.path)/.taskrun after it")
    }
    tally.add("cases")
    if warm { tally.add("warm cases") }
    if kills > 1 { tally.add("cases with a --resume killed too") }
    for (_, finish) in finished.outcomes { tally.add("ops then \(finish.outcome)") }
    if !problems.isEmpty {
      Issue.record(
        Comment(
          rawValue:
            context(problems.joined(separator: "\n"))
            + "\n--- workflow.lua ---\n\(script())--- the run after the kill ---\n\(tail(after))"
        ))
      return false
    }
    return true
  }
}
