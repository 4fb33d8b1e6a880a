// The engine's executor factory: which queues get Slurm's executor, and a clear error without Slurm's tools.
import Testing

@testable import TaskEngine

@Suite struct SlurmExecutorsTests {
  /// (what the queue asks, --executor) → whether its commands go to Slurm.
  static let choices: [(asked: String?, choice: String?, slurm: Bool)] = [
    (nil, nil, false), ("local", nil, false), ("slurm", nil, true), (nil, "slurm", true),
    ("local", "slurm", false), ("slurm", "local", false), (nil, "local", false), ("slurm", "slurm", true)
  ]

  @Test func aQueueGetsSlurmOnlyWhenItOrTheCommandLineAsksAndLocalWins() {
    let (s, _) = makeScheduler()
    let missing = Slurm.missingTools()
    for (asked, choice, slurm) in Self.choices {
      let what = "asked \(asked ?? "nothing"), --executor \(choice ?? "none")"
      do {
        let executor = try s.executor(asked: asked, choice: choice, placement: SlurmPlacement(), tag: "taskrun-test")
        #expect((executor != nil) == slurm, "\(what)")
        #expect(missing.isEmpty || !slurm, "\(what): made without Slurm's tools")
      } catch {
        #expect(slurm && error.missing == missing, "\(what): \(error)")
        #expect(
          error.description
            == "executor 'slurm' needs Slurm's tools, and \(missing.joined(separator: ", ")) are not on PATH")
      }
    }
  }
}
