// The prompts' line (confirm, choose): one body at a time, in order, skipping those no longer wanted.
import Testing

@testable import TaskEngine

@Suite struct PromptLineTests {
  @Test func bodiesRunOneAtATimeInOrderAndFinishedOperationsAreSkipped() {
    let queue = WorkQueue(id: 0, name: "main", maxConcurrent: 1, suspended: false)
    let ops = (1...4).map { OperationNode(id: $0, name: "op\($0)", queue: queue) }
    let line = PromptLine()
    var log: [String] = []
    var finish: [String: () -> Void] = [:]
    for op in ops {
      line.enter(wanted: { op.state != .finished }) { finished in
        log.append("ask \(op.name)")
        finish[op.name] = finished
      }
    }
    #expect(log == ["ask op1"], "the others wait for the first to finish")
    ops[1].state = .finished  // cancelled while it waited: never asked
    finish["op1"]!()
    #expect(log == ["ask op1", "ask op3"])
    finish["op3"]!()
    #expect(log == ["ask op1", "ask op3", "ask op4"])
    finish["op4"]!()
    line.enter(wanted: { true }) { _ in log.append("again op1") }
    #expect(log.last == "again op1", "a free line runs a body at once")
  }
}
