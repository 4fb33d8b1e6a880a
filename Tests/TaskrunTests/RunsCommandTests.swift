// taskrun runs, runs show and runs diff through the binary: real runs, a change between them, a doctored store, a schema 2 store.
import Foundation
import TestSupport
import Testing

@testable import taskrun

@Suite struct RunsCommandTests {
  /// gen → compile (compile fails when a.txt says "bad"), slow (sleeps as delay.txt says), pure.
  static let script = """
    operation { name = "gen", sh = "sleep 0.1; cp a.txt gen.h", inputs = "a.txt", outputs = "gen.h" }
    operation { name = "compile", after = "gen", inputs = "gen.h", outputs = "out.o",
      sh = "if grep -q bad gen.h; then echo 'a.c:1: error: broken' >&2; exit 1; fi; sleep 0.05; cp gen.h out.o" }
    operation { name = "slow", sh = "sleep $(cat delay.txt)", inputs = "delay.txt" }
    operation { name = "pure", run = function() end }
    """

  /// A folder with the workflow run twice: run 1 succeeds, run 2 (a.txt bad, slow slower) fails.
  static func twoRuns() throws -> URL {
    let dir = try Scratch.folder("runs", ["workflow.lua": script, "a.txt": "ok\n", "delay.txt": "0.05\n"])
    let first = try Binary.run(["--progress", "plain"], in: dir)
    #expect(first.status == 0, "\(first.stdout)\(first.stderr)")
    try "bad\n".write(to: dir.appendingPathComponent("a.txt"), atomically: true, encoding: .utf8)
    try "2\n".write(to: dir.appendingPathComponent("delay.txt"), atomically: true, encoding: .utf8)
    let second = try Binary.run(["--progress", "plain", "-k", "compile", "slow", "pure"], in: dir)
    #expect(second.status == 1, "\(second.stdout)\(second.stderr)")
    return dir
  }

  @Test func runsListsBothRunsNewestFirstWithTheirCountsAndTargets() throws {
    let dir = try Self.twoRuns()
    let list = try Binary.run(["runs"], in: dir)
    #expect(list.status == 0, "\(list.stderr)")
    let lines = list.stdout.split(separator: "\n").map(String.init)
    try #require(lines.count == 3 && lines[0].hasPrefix("run "), "\(list.stdout)")
    let words = lines.dropFirst().map { $0.split(separator: " ").map(String.init) }
    try #require(words.allSatisfy { $0.count >= 13 }, "\(list.stdout)")
    // run, date, time, duration, "s", outcome, ran, failed, cancelled, skipped, up to date, resumed, targets
    #expect(words[0][0] == "2" && words[0][5] == "failed" && Array(words[0][6...11]) == ["3", "1", "0", "0", "0", "0"])
    #expect(Array(words[0][12...]) == ["compile", "slow", "pure"], "\(lines[1])")
    #expect(
      words[1][0] == "1" && words[1][5] == "succeeded" && Array(words[1][6...11]) == ["4", "0", "0", "0", "0", "0"])
    #expect(words[1].last == "(default)", "\(lines[2])")
    let json = try Binary.run(["runs", "--json", "--limit", "1"], in: dir)
    let objects = json.stdout.split(separator: "\n").compactMap {
      try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
    }
    #expect(objects.count == 1, "\(json.stdout)")
    #expect(objects.first?["id"] as? Int == 2 && objects.first?["failed"] as? Int == 1)
    #expect(objects.first?["targets"] as? [String] == ["compile", "slow", "pure"])
  }

  @Test func runsShowPrintsTheSummaryTheRunEndedWith() throws {
    let dir = try Self.twoRuns()
    let first = try Binary.run(["runs", "show", "1"], in: dir)
    #expect(first.status == 0, "\(first.stderr)")
    #expect(first.stdout.contains("Run 1: succeeded"), "\(first.stdout)")
    #expect(first.stdout.contains("Critical path: gen ("), "\(first.stdout)")
    #expect(first.stdout.contains(") → compile ("), "\(first.stdout)")
    #expect(first.stdout.contains("Slowest: gen "), "\(first.stdout)")
    #expect(first.stdout.contains("4 succeeded in "), "\(first.stdout)")
    let last = try Binary.run(["runs", "workflow.lua", "show", "last"], in: dir)
    #expect(last.stdout.contains("Run 2: failed"), "\(last.stdout)")
    #expect(last.stdout.contains("Failures:\n  compile: exited with status 1"), "\(last.stdout)")
    #expect(last.stdout.contains("    | a.c:1: error: broken"), "the output's tail is kept: \(last.stdout)")
    #expect(last.stdout.contains("3 succeeded, 1 failed in "), "\(last.stdout)")
    let missing = try Binary.run(["runs", "show", "99"], in: dir)
    #expect(missing.status == 1 && missing.stderr.contains("run 99 is not in the store"), "\(missing.stderr)")
    let bad = try Binary.run(["runs", "show", "x1"], in: dir)
    #expect(bad.status == 2 && bad.stderr.contains("'x1' is not a run"), "\(bad.stderr)")
    let other = try Binary.run(["runs", "frobnicate"], in: dir)
    #expect(other.status == 2 && other.stderr.contains("is not show or diff"), "\(other.stderr)")
  }

  @Test func theStoreCommandsTakeDashCAndDashFBeforeTheirName() throws {
    let dir = try Self.twoRuns()
    for (arguments, expected) in [
      (["-C", dir.path, "runs"], "failed"), (["-C", dir.path, "why", "gen"], "gen"),
      (["-C", dir.path, "history"], "succeeded"), (["-C", dir.path, "report", "-o", "-"], "<!DOCTYPE html>"),
      (["-f", dir.appendingPathComponent("workflow.lua").path, "runs"], "failed")
    ] {
      let run = try Binary.run(arguments, in: Scratch.root)
      #expect(run.status == 0 && run.stdout.contains(expected), "\(arguments): \(run.stdout)\(run.stderr)")
    }
    let refused = try Binary.run(["-j2", "-C", dir.path, "runs"], in: Scratch.root)
    #expect(refused.status == 2 && refused.stderr.contains("'taskrun runs' does not take -j"), "\(refused.stderr)")
  }

  @Test func runsDiffShowsTheOutcomeDurationAndWhyChanges() throws {
    let dir = try Self.twoRuns()
    for arguments in [["runs", "diff"], ["runs", "diff", "1"], ["runs", "diff", "1", "last"]] {
      let diff = try Binary.run(arguments, in: dir)
      #expect(diff.status == 0, "\(diff.stderr)")
      let text = diff.stdout
      #expect(text.hasPrefix("Run 1 → run 2\n"), "\(text)")
      #expect(text.contains("Outcome:\n  compile: succeeded → failed\n"), "\(text)")
      #expect(text.contains("Duration (both ≥ 10 ms, changed by ≥ 20% and ≥ 50 ms):\n  slow: "), "\(text)")
      #expect(!text.contains("  gen: 0."), "gen took as long: \(text)")
      #expect(text.contains("Why they ran in run 2:"), "\(text)")
      #expect(text.contains("  gen: input a.txt changed"), "\(text)")
      #expect(text.contains("  slow: input delay.txt changed"), "\(text)")
    }
    let same = try Binary.run(["runs", "diff", "2", "2"], in: dir)
    #expect(same.stdout.contains("No operation changed"), "\(same.stdout)")
  }

  @Test func reusedOperationsDidNotRunInTheDiffAndAreCountedAsTheSummaryCountsThem() throws {
    let dir = try Scratch.folder(
      "runs-reused",
      ["workflow.lua": #"operation { name = "a", sh = "true" } operation { name = "b", sh = "test -f ok" }"#])
    #expect(try Binary.run(["--progress", "plain", "-k"], in: dir).status == 1)  // run 1: a ran, b failed
    #expect(try Binary.run(["--progress", "plain", "b"], in: dir).status == 1)  // run 2: b alone failed
    try "".write(to: dir.appendingPathComponent("ok"), atomically: true, encoding: .utf8)
    let resumed = try Binary.run(["--progress", "plain", "--resume=1"], in: dir)  // run 3: a reused, b ran
    #expect(resumed.status == 0 && resumed.stdout.contains("1 succeeded, 1 resumed"), "\(resumed.stdout)")
    let diff = try Binary.run(["runs", "diff", "2", "3"], in: dir)
    #expect(diff.status == 0, "\(diff.stderr)")
    #expect(diff.stdout.contains("Outcome:\n  b: failed → succeeded\n"), "\(diff.stdout)")
    #expect(!diff.stdout.contains("Ran only in run 3"), "a reused operation did not run: \(diff.stdout)")
    #expect(!diff.stdout.contains("  a: succeeded in run 1"), "nor is it among why they ran: \(diff.stdout)")
    #expect(diff.stdout.contains("Why they ran in run 3:\n  b: failed in run "), "\(diff.stdout)")
    #expect(diff.stdout.contains("Reused in run 3 (up to date or resumed, not run): 1 operation: a"), "\(diff.stdout)")
    let fromFirst = try Binary.run(["runs", "diff", "1", "3"], in: dir)
    #expect(fromFirst.stdout.contains("Ran only in run 1: a\n"), "a ran in run 1 only: \(fromFirst.stdout)")
    #expect(!fromFirst.stdout.contains("→ reused"), "not an outcome: \(fromFirst.stdout)")
    // runs and runs --json count a as the summary does: resumed, not up to date.
    let list = try Binary.run(["runs", "--limit", "1"], in: dir)
    let words = list.stdout.split(separator: "\n").last?.split(separator: " ").map(String.init) ?? []
    try #require(words.count >= 13, "\(list.stdout)")
    #expect(Array(words[6...11]) == ["1", "0", "0", "0", "0", "1"], "\(list.stdout)")
    let json = try Binary.run(["runs", "--json", "--limit", "1"], in: dir)
    let object = try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any]
    #expect(object?["up_to_date"] as? Int == 0 && object?["resumed"] as? Int == 1, "\(json.stdout)")
  }

  @Test func aRunThatEndedInAnErrorSaysSo() throws {
    let dir = try Scratch.folder("runs-error", ["workflow.lua": "operation { name = "])
    let run = try Binary.run(["--progress", "plain"], in: dir)
    #expect(run.status == 2, "\(run.stderr)")
    let show = try Binary.run(["--", "runs", "show", "last"], in: dir)
    #expect(show.status == 0 && show.stdout.contains("Run 1: error"), "\(show.stdout)\(show.stderr)")
    #expect(
      show.stdout.contains("The run ended in an error before any operation finished: the script did not load"),
      "\(show.stdout)")
    let report = try Binary.run(["--", "report", "-o", "-"], in: dir)
    #expect(
      report.stdout.contains("<p class=\"error-note\" id=\"error-note\">The run ended in an error"), "\(report.stderr)")
  }

  @Test func aTargetNamedReportOrRunsIsThatTargetUnlessAfterTheSeparator() throws {
    let dir = try Scratch.folder(
      "runs-target", ["workflow.lua": #"operation { name = "report", sh = "echo made > made.txt" }"#])
    let target = try Binary.run(["-q", "report"], in: dir)
    #expect(target.status == 0 && FileManager.default.fileExists(atPath: dir.appendingPathComponent("made.txt").path))
    let subcommand = try Binary.run(["--", "report"], in: dir)
    #expect(subcommand.status == 0 && subcommand.stdout.contains("Wrote the report of run 1"), "\(subcommand.stderr)")
    #expect(FileManager.default.fileExists(atPath: dir.appendingPathComponent("taskrun-report-1.html").path))
    let runs = try Binary.run(["--", "runs"], in: dir)
    #expect(runs.status == 0 && runs.stdout.contains("\n1 "), "\(runs.stdout)")
  }

  @Test func theNotableDurationRule() {
    #expect(RunsDiff.isNotable(0.1, 0.2))
    #expect(!RunsDiff.isNotable(0.1, 0.14), "under 50 ms")
    #expect(!RunsDiff.isNotable(1.0, 1.1), "under 20%")
    #expect(!RunsDiff.isNotable(0.005, 0.5), "shorter than 10 ms")
    #expect(RunsDiff.isNotable(2.0, 1.0))
  }

  @Test func withoutAStoreTheCommandsSaySo() throws {
    let dir = try Scratch.folder("runs-none", ["workflow.lua": #"operation { name = "a", sh = "true" }"#])
    let list = try Binary.run(["runs"], in: dir)
    #expect(list.status == 0 && list.stdout.contains("No runs recorded in "), "\(list.stdout)\(list.stderr)")
    for arguments in [["runs", "show", "1"], ["runs", "diff"], ["report"]] {
      let run = try Binary.run(arguments, in: dir)
      #expect(run.status == 1 && run.stderr.contains("no runs recorded in "), "\(arguments): \(run.stderr)")
    }
    #expect(!FileManager.default.fileExists(atPath: dir.appendingPathComponent(".taskrun").path))
    // A wrong word is a usage error (exit 2) before the store is looked at: without one as with one.
    let wrong: [([String], String)] = [
      (["runs", "frob"], "is not show or diff"), (["runs", "show", "abc"], "'abc' is not a run"),
      (["runs", "show"], "takes one run"), (["runs", "diff", "1", "x"], "'x' is not a run"),
      (["runs", "diff", "1", "2", "3"], "at most two runs"), (["report", "abc"], "'abc' is not a run"),
      (["report", "1", "2"], "takes one run")
    ]
    for (arguments, message) in wrong {
      let run = try Binary.run(arguments, in: dir)
      #expect(run.status == 2 && run.stderr.contains(message), "\(arguments): \(run.status) \(run.stdout)\(run.stderr)")
      #expect(!run.stdout.contains("No runs recorded"), "\(arguments)")
    }
    let one = try Binary.run(["--progress", "plain"], in: dir)
    #expect(one.status == 0)
    let diff = try Binary.run(["runs", "diff"], in: dir)
    #expect(diff.status == 1 && diff.stderr.contains("needs two runs, and 1 is recorded"), "\(diff.stderr)")
    for (arguments, message) in wrong {
      let run = try Binary.run(arguments, in: dir)
      #expect(run.status == 2 && run.stderr.contains(message), "with a store, \(arguments): \(run.stderr)")
    }
  }

  @Test func aDoctoredStoreGivesNoTrap() throws {
    let dir = try Self.twoRuns()
    let db = dir.appendingPathComponent(".taskrun/workflow.lua.db").path
    // NaN, negative and huge times and counts; invalid UTF-8; a summary whose elapsed time is
    // NaN and one that is not a summary; an attempts batch of random bytes.
    let sql = """
      UPDATE runs SET started = 'NaN', ended = -5, succeeded = -3, failed = 1e300,
        command = CAST(X'41FF42' AS TEXT), targets = X'0203FF4142' WHERE id = 1;
      UPDATE runs SET started = 1e300, ended = 'x' WHERE id = 2;
      UPDATE summaries SET summary = X'01' || X'000000000000F87F' || substr(summary, 10) WHERE run = 2;
      UPDATE summaries SET summary = X'FF0102' WHERE run = 1;
      INSERT INTO attempts(run, batch) VALUES (2, randomblob(200));
      INSERT INTO attempts(run, batch) VALUES (1, X'03414243' || X'01' || X'03787878' || X'000000000000F0FF' || X'01' || X'000000000000F87F'
        || X'000000000000000000');
      """
    let changed = try Child.output(["sqlite3", db, sql])
    #expect(changed.status == 0)
    for arguments in [
      ["runs"], ["runs", "--json"], ["runs", "show", "1"], ["runs", "show", "2"], ["runs", "diff"],
      ["report", "1", "-o", "r1.html"], ["report", "-o", "r2.html"]
    ] {
      let run = try Binary.run(arguments, in: dir)
      #expect(run.status == 0, "\(arguments): \(run.status) \(run.stdout) \(run.stderr)")
      #expect(!run.stdout.contains("\u{1B}"), "\(arguments)")
    }
    let show = try Binary.run(["runs", "show", "1"], in: dir)
    #expect(
      show.stdout.contains("No summary was recorded for this run (the store's summary of it cannot be read)."),
      "\(show.stdout)")
    #expect(show.stdout.contains("Command: A\u{FFFD}B"), "invalid UTF-8 read as U+FFFD: \(show.stdout)")
    let nan = try Binary.run(["runs", "show", "2"], in: dir)
    #expect(nan.stdout.contains("3 succeeded, 1 failed in 0.00 s"), "a NaN elapsed time reads as 0: \(nan.stdout)")
  }

  /// The tables of schema 2, as taskrun made them before runs kept targets and summaries.
  static let schema2 = """
    CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT) WITHOUT ROWID;
    CREATE TABLE runs(
      id INTEGER PRIMARY KEY, started REAL NOT NULL, ended REAL, command TEXT NOT NULL,
      pid INTEGER, outcome TEXT, succeeded INTEGER, failed INTEGER, cancelled INTEGER,
      skipped INTEGER, up_to_date INTEGER);
    CREATE TABLE attempts(id INTEGER PRIMARY KEY, run INTEGER NOT NULL, batch BLOB NOT NULL);
    CREATE INDEX attempts_in ON attempts(run);
    CREATE TABLE failures(operation TEXT PRIMARY KEY, run INTEGER NOT NULL, outcome TEXT NOT NULL) WITHOUT ROWID;
    CREATE TABLE records(
      operation TEXT PRIMARY KEY, run INTEGER NOT NULL, fingerprint BLOB NOT NULL, quick BLOB,
      produced BLOB NOT NULL, record BLOB NOT NULL) WITHOUT ROWID;
    CREATE TABLE durations(operation TEXT PRIMARY KEY, recent BLOB NOT NULL) WITHOUT ROWID;
    INSERT INTO meta VALUES ('schema', '2');
    INSERT INTO runs VALUES (7, 1700000000, 1700000002.5, 'taskrun build.lua', 1, 'succeeded', 4, 0, 0, 0, 1);
    INSERT INTO durations VALUES ('slow', X'9A9999999999B93F');
    """

  @Test func aSchema2StoreIsReadAndMigratedKeepingItsHistory() throws {
    let dir = try Scratch.folder("runs-v2", ["workflow.lua": Self.script, "a.txt": "ok\n", "delay.txt": "0.05\n"])
    let folder = dir.appendingPathComponent(".taskrun")
    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    let db = folder.appendingPathComponent("workflow.lua.db").path
    #expect(try Child.output(["sqlite3", db, Self.schema2]).status == 0)
    // Read as it is (a reader does not migrate): the old run, without targets or a summary.
    let before = try Binary.run(["runs"], in: dir)
    #expect(before.status == 0 && before.stdout.contains("\n7 "), "\(before.stdout)\(before.stderr)")
    #expect(before.stdout.split(separator: "\n").last?.hasSuffix(" -") == true, "no targets recorded: \(before.stdout)")
    let show = try Binary.run(["runs", "show", "7"], in: dir)
    #expect(show.status == 0 && show.stdout.contains("No summary was recorded"), "\(show.stdout)\(show.stderr)")
    #expect(try Child.output(["sqlite3", db, "SELECT value FROM meta"]).stdout == "2\n")
    // A run migrates it: the old run stays, the new one has its targets and summary.
    let run = try Binary.run(["--progress", "plain"], in: dir)
    #expect(run.status == 0 && !run.stderr.contains("warning"), "\(run.stderr)")
    #expect(try Child.output(["sqlite3", db, "SELECT value FROM meta"]).stdout == "3\n")
    let after = try Binary.run(["runs"], in: dir)
    #expect(after.stdout.contains("\n7 ") && after.stdout.contains("\n8 "), "\(after.stdout)")
    let show8 = try Binary.run(["runs", "show", "8"], in: dir)
    #expect(show8.stdout.contains("Critical path: gen ("), "\(show8.stdout)")
    // The durations of the old store were kept: the ETA's history is not lost.
    let history = try Binary.run(["history", "slow"], in: dir)
    #expect(history.stdout.contains("Typical: "), "\(history.stdout)")
    #expect(try Child.output(["sqlite3", db, "PRAGMA integrity_check"]).stdout == "ok\n")
  }
}
