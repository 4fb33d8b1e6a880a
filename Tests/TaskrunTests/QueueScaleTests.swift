// Declaring queues costs the same per queue however many there are (it used to scan them all).
import Foundation
import Testing

/// Each queue{} compared its name with every queue before it: 16,000 queues took 4 s, 60,000
/// about a minute of CPU. The bound is on CPU time (os.clock), not wall time, and some 50
/// times what the linear cost takes in a debug build, so a busy machine does not fail it.
@Suite struct QueueScaleTests {
  @Test func sixtyThousandQueuesAreDeclaredInLinearTime() throws {
    let run = try ScriptRun.run(
      """
      local start = os.clock()
      for i = 1, 60000 do queue { name = "q" .. i } end
      print(("declared in %.3f s"):format(os.clock() - start))
      print(pcall(queue, { name = "q30000" }))
      """, timeout: 180)
    #expect(run.status == 0, "\(run.stdout)\(run.stderr)")
    let seconds = run.stdout.split(separator: "\n").first { $0.hasPrefix("declared in ") }
      .flatMap { Double($0.dropFirst("declared in ".count).dropLast(2)) }
    #expect(seconds != nil && seconds! < 10, "\(run.stdout)")
    // Names stay unique.
    #expect(run.stdout.contains("false\ta queue named 'q30000' already exists"), "\(run.stdout)")
  }
}
