// What a Session builds before any Lua runs: its display's sinks and tick, and the report files it opens.
import Foundation
import TaskEngine
import TestSupport
import Testing

@testable import taskrun

@Suite struct SessionTests {
  static func reporter() -> PlainReporter {
    PlainReporter(verbosity: .normal, color: ColorPolicy.decide(disabled: true, isTerminal: false))
  }

  @Test func plainLinesAreTheOnlySinkAndNothingTicks() {
    let session = Session(
      jobs: 3, keepGoing: true, display: .lines(Self.reporter(), live: false),
      host: .init(arguments: []))
    #expect(session.liveView == nil && session.lines != nil)
    #expect(session.scheduler.sinks.count == 1 && session.scheduler.sinks.first is PlainReporter)
    #expect(session.scheduler.keepGoing)
    #expect(session.scheduler.tickInterval == nil)
  }

  @Test func givenSinksAreTheSessionsOwn() {
    let held = HeldMessages()
    let session = Session(jobs: 1, keepGoing: false, display: .sinks([held]), host: .init(arguments: []))
    #expect(session.lines == nil && session.liveView == nil && !session.scheduler.keepGoing)
    #expect(session.scheduler.sinks.count == 1 && session.scheduler.sinks.first === held)
  }

  /// A relative --events or --trace path is opened in the folder given (where taskrun
  /// started), not in the working directory, which -C or a script found above may change.
  @Test func reportsOpenInTheFolderGivenAndEventsTick() throws {
    let dir = Scratch.root.appendingPathComponent("session-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
    let folder = open(dir.path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
    try #require(folder >= 0)
    defer { close(folder) }
    let session = Session(
      jobs: 1, keepGoing: false, display: .lines(Self.reporter(), live: false),
      host: .init(arguments: []))
    let name = "report-\(UUID().uuidString)"
    try session.addReports(events: name + ".ndjson", trace: name + ".json", folder: folder)
    #expect(FileManager.default.fileExists(atPath: dir.appendingPathComponent(name + ".ndjson").path))
    #expect(FileManager.default.fileExists(atPath: dir.appendingPathComponent(name + ".json").path))
    #expect(!FileManager.default.fileExists(atPath: name + ".ndjson"))
    #expect(session.scheduler.sinks.count == 3)
    #expect(session.scheduler.tickInterval.map { abs($0 - 1.0 / 15) < 1e-9 } == true)
    // Test mode's events carry no progress ticks.
    let quiet = Session(jobs: 1, keepGoing: false, display: .sinks([]), host: .init(arguments: []))
    try quiet.addReports(events: name + "-test.ndjson", trace: nil, folder: folder, progressTicks: false)
    #expect(quiet.scheduler.sinks.count == 1 && quiet.scheduler.tickInterval == nil)
  }

  @Test func aReportThatCannotBeOpenedSaysWhichAndWhy() {
    let session = Session(jobs: 1, keepGoing: false, display: .sinks([]), host: .init(arguments: []))
    let path = Scratch.root.appendingPathComponent("no-such-folder-\(UUID().uuidString)/e.ndjson").path
    #expect {
      try session.addReports(events: path, trace: nil, folder: AT_FDCWD, progressTicks: false)
    } throws: { error in
      "\(error)".contains("cannot write events to '\(path)'") && "\(error)".contains("No such file")
    }
    #expect(session.scheduler.sinks.isEmpty)
  }
}
