// The run store's parts: depfiles, globs, why lines, records, the store's lock, pruning and a killed run.
import Foundation
import TestSupport
import Testing

@testable import TaskEngine

@Suite struct RunStoreTests {
  func folder(_ files: [String: String] = [:]) throws -> String {
    let dir = try Scratch.folder("runstore", [:])
    for (name, text) in files {
      let url = dir.appendingPathComponent(name)
      try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
      try text.write(to: url, atomically: true, encoding: .utf8)
    }
    return dir.path
  }

  @Test func depfilesNameEveryPrerequisiteOnceWithEscapesAndContinuations() {
    let text =
      "out/a.o: src/a.c include/a\\ b.h \\\n  include/c.h src/a.c\n\ninclude/c.h:\n# a comment: x.h\nx$$y.o: z.h\r\n"
    #expect(Depfile.prerequisites(Array(text.utf8)) == ["src/a.c", "include/a b.h", "include/c.h", "z.h"])
    #expect(Depfile.prerequisites([]) == [])
    #expect(Depfile.prerequisites(Array("a.o:\n".utf8)) == [])
  }

  @Test func globsExpandToSortedFilesAndKeepMissingPlainPaths() throws {
    let dir = try folder(["src/a.c": "a", "src/b.c": "b", "src/sub/c.c": "c", "src/.hidden.c": "h", "src/x.h": "x"])
    let d = dir  // absolute patterns: the tests of this process share one working folder
    #expect(Globs.expand(["\(d)/src/*.c"]) == ["\(d)/src/a.c", "\(d)/src/b.c"])
    #expect(Globs.expand(["\(d)/src/**/*.c"]) == ["\(d)/src/a.c", "\(d)/src/b.c", "\(d)/src/sub/c.c"])
    #expect(Globs.expand(["\(d)/src/sub"]) == ["\(d)/src/sub/c.c"])  // a folder stands for its files
    #expect(Globs.expand(["\(d)/missing.txt", "\(d)/src/x.h", "\(d)/src/x.h"]) == ["\(d)/missing.txt", "\(d)/src/x.h"])
    #expect(Globs.expand(["\(d)/nothing/*.c"]) == [])
  }

  @Test func aChangeSaysWhichWordsChanged() {
    #expect(Why.change("cc -O2 -c a.c", "cc -O3 -c a.c") == "-O2 → -O3")
    #expect(Why.change("cc a.c", "cc -g a.c") == "nothing → -g")
    #expect(Why.change("a b c", "a b") == "c → nothing")
  }

  @Test func aRecordSurvivesItsEncodingAndRefusesDamage() {
    var record = OperationRecord()
    record.identity = [.init("command", "cc -c a.c"), .init("key", "{[\"x\"]=1}")]
    let file = FileRecord(path: "a.c", size: 12, mtime: -5, inode: 77, digest: Digest(high: 1, low: 2), trusted: true)
    (record.inputs, record.outputs) = ([file], [file])
    record.upstream = [.init(name: "gen", outputs: [.init(path: "g.h", digest: Digest(high: 3, low: 4))])]
    let bytes = record.encoded()
    let back = OperationRecord(run: 0, fingerprint: .zero, bytes: bytes)
    #expect(back == record)
    #expect(OperationRecord(run: 0, fingerprint: .zero, bytes: Array(bytes.dropLast())) == nil)
    #expect(OperationRecord(run: 0, fingerprint: .zero, bytes: bytes + [0]) == nil)
  }

  @Test func aFileWrittenJustBeforeItWasHashedIsHashedAgain() throws {
    let dir = try folder(["f.txt": "one"])
    let look = FileLook()
    let first = try #require(look.look(dir + "/f.txt", previous: nil))
    #expect(!first.trusted)  // written a moment ago: racily clean
    let old = FileRecord(
      path: first.path, size: first.size, mtime: first.mtime, inode: first.inode, digest: .zero, trusted: true)
    #expect(look.look(dir + "/f.txt", previous: old)?.digest == .zero)  // trusted and the same stat: not read
    #expect(look.look(dir + "/f.txt", previous: first)?.digest == first.digest)
    #expect(look.hashed == 2)
    #expect(look.look(dir + "/none", previous: nil) == nil)
  }

  @Test func theStoreKeepsRecordsAndRunsAndHoldsItsFolder() throws {
    let dir = try folder()
    let store = try RunStore(workflowFolder: dir, lock: true)
    #expect(throws: RunStore.Busy.self) { try RunStore(workflowFolder: dir, lock: true) }
    let run = try store.beginRun(command: "taskrun x.lua", at: 100)
    var record = OperationRecord()
    record.run = run
    record.fingerprint = Digest(high: 9, low: 9)
    store.save(record, of: "a")
    var attempt = AttemptRecord(operation: "a", attempt: 1, outcome: "succeeded", started: 100)
    attempt.duration = 2.5
    store.record(attempt, run: run)
    store.commit()
    #expect(store.record(of: "a")?.fingerprint == Digest(high: 9, low: 9))
    #expect(store.summaries()["a"]?.run == run)
    store.saveDurations([2.5, 1], of: "a")
    store.commit()
    #expect(store.durations()["a"] == [2.5, 1])
    #expect(store.integrity() == "ok")
    // A reader sees what was committed while the run holds the lock.
    let reader = try RunStore(workflowFolder: dir, lock: false)
    #expect(reader.runs().map(\.id) == [run])
    #expect(FileManager.default.fileExists(atPath: dir + "/.taskrun/.gitignore"))
  }

  @Test func aRunThatNeverEndedIsMarkedKilledAndOldRunsArePruned() throws {
    let dir = try folder()
    do {
      let store = try RunStore(workflowFolder: dir, lock: true)
      for k in 0..<5 { _ = try store.beginRun(command: "run \(k)", at: Double(k)) }
    }  // closed without ending its runs: as a killed taskrun leaves them
    let store = try RunStore(workflowFolder: dir, lock: true)
    #expect(store.runs().allSatisfy { $0.outcome == "killed" })
    store.prune(keeping: 2)
    #expect(store.runs().map(\.id) == [5, 4])
  }

  @Test func everyScriptNameHasAStoreOfItsOwn() {
    let names = ["a b.lua", "a_b.lua", "a+b.lua", "a%20b.lua", ".hidden.lua", "ü.lua", "build.lua"]
    #expect(Set(names.map(RunStore.fileName)).count == names.count)
    #expect(RunStore.fileName("dir/build.lua") == "build.lua")
    #expect(!RunStore.fileName(".hidden.lua").hasPrefix("."))
  }

  @Test func aStoreFolderThatIsALinkOrABrokenFileIsRefused() throws {
    let dir = try folder()
    let elsewhere = try folder()
    try FileManager.default.createSymbolicLink(atPath: dir + "/.taskrun", withDestinationPath: elsewhere)
    #expect(throws: StoreError.self) { try RunStore(workflowFolder: dir, lock: true) }
    let broken = try folder([".taskrun/workflow.db": "not a database, only words"])
    #expect(throws: StoreError.self) { try RunStore(workflowFolder: broken, lock: true) }
  }
}
