// The graph: names, cycles, dependency rules, "why" and deadlock detection.
import Testing

@testable import TaskEngine

/// The size of the block malloc gave for `pointer` (glibc's and mimalloc's malloc.h).
@_silgen_name("malloc_usable_size") private func mallocUsableSize(_ pointer: UnsafeMutableRawPointer) -> Int

@Suite struct GraphTests {
  /// Rarely set fields live outside the node: a plain operation that runs and fails never
  /// allocates them, and its node fits a 192-byte block (448 before its fields were packed:
  /// a million operations took 256 MB more); set, they read back and persist.
  @Test func aPlainOperationCarriesNoExtrasAndSetOnesReadBack() throws {
    let (s, _) = makeScheduler()
    let log = Log()
    let plain = try s.op("plain", 1, .failed, log: log)
    let rich = try s.op("rich", 1, log: log)
    rich.timeout = 5
    rich.activities.append("net")
    rich.desc = "described"
    s.keepGoing = true
    try s.runAll()
    #expect(plain.failed && plain.traceback == nil && plain.timeout == nil && plain.children.isEmpty)
    #expect(plain.extrasStorage == nil)
    let block = mallocUsableSize(Unmanaged.passUnretained(plain).toOpaque())
    #expect(block > 0 && block <= 192, "a node takes \(block) bytes")
    #expect(rich.succeeded && rich.timeout == 5 && rich.activities == ["net"] && rich.desc == "described")
    rich.desc = nil
    #expect(rich.desc == nil && rich.timeout == 5)
  }

  @Test func defaultNamesFollowDeclarationOrderAndNamesAreUnique() throws {
    let (s, _) = makeScheduler()
    #expect(try s.makeOperation().name == "op1")
    #expect(try s.makeOperation(name: "x").name == "x")
    #expect(try s.makeOperation().name == "op3")
    #expect(throws: EngineError(.duplicateName, "an operation named 'x' already exists")) {
      try s.makeOperation(name: "x")
    }
  }

  @Test func anEdgeThatClosesACycleIsRefusedWithTheCycle() throws {
    let (s, _) = makeScheduler()
    let a = try s.makeOperation(name: "a")
    let b = try s.makeOperation(name: "b")
    let c = try s.makeOperation(name: "c")
    try s.addDependency(b, on: a)
    try s.addDependency(c, on: b)
    #expect(throws: EngineError(.cycle, "dependency cycle: a -> c -> b -> a")) {
      try s.addDependency(a, on: c)
    }
    #expect(a.dependencies.isEmpty)
  }

  @Test func namesResolveLaterAndCyclesThroughNamesAreFound() throws {
    let (s, _) = makeScheduler()
    let a = try s.makeOperation(name: "a")
    try s.addDependency(a, named: "b")
    let b = try s.makeOperation(name: "b")
    try s.addDependency(b, named: "c")
    _ = try s.makeOperation(name: "c")
    try s.addDependency(s.operation(named: "c")!, named: "later")
    let later = try s.makeOperation(name: "later")
    try s.addDependency(later, named: "a")
    #expect(throws: EngineError(.cycle, "dependency cycle: a -> b -> c -> later -> a")) { try s.resolveNames() }
  }

  @Test func anUnknownNameSuggestsTheClosest() throws {
    let (s, _) = makeScheduler()
    let deploy = try s.makeOperation(name: "deploy")
    _ = try s.makeOperation(name: "build")
    try s.addDependency(deploy, named: "biuld")
    #expect(
      throws: EngineError(
        .unknownName, "'deploy' depends on 'biuld', but no operation has that name; did you mean 'build'?")
    ) {
      try s.resolveNames()
    }
  }

  @Test func aNamesErrorsArePlacedWhereTheNameWasGiven() throws {
    let (s, _) = makeScheduler()
    let deploy = try s.makeOperation(name: "deploy")
    try s.addDependency(deploy, named: "biuld", place: "w.lua:3:")
    #expect(
      throws: EngineError(
        .unknownName, "'deploy' depends on 'biuld', but no operation has that name",
        place: "w.lua:3:")
    ) { try s.resolveNames() }
    // Only the edge given by name is new: the cycle is placed at it, whatever the other edges.
    let (t, _) = makeScheduler()
    let a = try t.makeOperation(name: "a")
    try t.addDependency(a, named: "c", place: "w.lua:5:")
    let b = try t.makeOperation(name: "b")
    try t.addDependency(b, on: a)
    let c = try t.makeOperation(name: "c")
    try t.addDependency(c, named: "b", place: "w.lua:7:")  // b exists: an edge at once, no place kept
    let error = #expect(throws: EngineError.self) { try t.resolveNames() }
    #expect(error?.place == "w.lua:5:" && error?.located(in: "w.lua") == "w.lua:5: dependency cycle: a -> c -> b -> a")
    #expect(EngineError(.cycle, "x").located(in: "w.lua") == "w.lua: x", "no place: the script's name")
  }

  @Test func dependenciesCannotBeAddedOnceStarted() throws {
    let (s, _) = makeScheduler()
    let log = Log()
    let a = try s.op("a", 5, log: log)
    let b = try s.makeOperation(name: "b")
    s.schedule([a])
    s.pump()
    #expect(throws: EngineError.self) { try s.addDependency(a, on: b) }
  }

  @Test func duplicateAndFinishedDependenciesDoNotBlock() throws {
    let (s, _) = makeScheduler()
    let log = Log()
    let a = try s.op("a", log: log)
    try s.runAll()
    let b = try s.op("b", log: log)
    try s.addDependency(b, on: a)
    try s.addDependency(b, on: a)
    #expect(b.dependencies.count == 1)
    try s.runAll([b])
    #expect(b.succeeded && b.startTime == a.finishTime)
  }

  @Test func whyExplainsWhatAnOperationWaitsFor() throws {
    let (s, _) = makeScheduler(jobs: 1)
    let log = Log()
    let a = try s.op("a", 5, log: log)
    let b = try s.op("b", 1, log: log)
    let c = try s.op("c", 1, log: log, after: [a])
    #expect(s.explain(c) == "'c' is not scheduled: nothing has asked to run it yet")
    s.schedule(s.operations)
    s.pump()
    #expect(s.explain(a) == "'a' is executing")
    #expect(s.explain(b) == "'b' is ready, but queue 'main' is full (1 of 1 running: 'a')")
    #expect(s.explain(c) == "'c' waits for 1 dependency: 'a' (executing)")
  }

  @Test func waitingOnSomethingThatWaitsOnYouIsADeadlock() throws {
    let (s, _) = makeScheduler()
    let a = try s.makeOperation(name: "a")
    let b = try s.makeOperation(name: "b")
    let c = try s.makeOperation(name: "c")
    try s.addDependency(c, on: a)  // c cannot start before a finishes
    #expect(s.beginWait(a, for: b) == nil)
    #expect(s.beginWait(b, for: c)?.map(\.name) == ["b", "c", "a", "b"])
  }

  @Test func suggestionsAreCloseMatchesOnly() {
    #expect(suggestion(for: "tset", among: ["test", "build"]) == "did you mean 'test'?")
    #expect(suggestion(for: "zzz", among: ["test", "build"]) == "")
  }
}
