// The event loop alone on a manual clock: timer order, cancelling, deadlines, off-thread completions.
import Dispatch
import Testing

@testable import TaskEngine

@Suite struct EventLoopTests {
  @Test func dueTimersFireEarliestFirstAndTiesInTheOrderTheyWereSet() {
    let clock = ManualClock()
    let loop = EventLoop(clock: clock)
    var fired: [String] = []
    loop.after(2) { fired.append("b") }
    loop.after(1) { fired.append("a") }
    loop.after(2) { fired.append("c") }
    loop.after(5) { fired.append("late") }
    #expect(!loop.fireDue() && fired.isEmpty, "nothing is due at 0")
    clock.advance(by: 2)
    #expect(loop.fireDue())
    #expect(fired == ["a", "b", "c"])
    #expect(loop.nextDeadline == 5)
  }

  @Test func aCancelledTimerNeverFiresAndNoLongerSetsTheDeadline() {
    let clock = ManualClock()
    let loop = EventLoop(clock: clock)
    var fired: [String] = []
    let early = loop.after(1) { fired.append("early") }
    loop.after(3) { fired.append("kept") }
    loop.cancel(early)
    loop.cancel(nil)  // nothing to cancel
    #expect(loop.nextDeadline == 3)
    clock.advance(by: 5)
    #expect(loop.fireDue())
    #expect(fired == ["kept"])
    #expect(loop.nextDeadline == nil && loop.isIdle)
  }

  @Test func workDoneOffTheThreadAnswersOnTheLoopAndKeepsItBusyUntilThen() {
    let loop = EventLoop(clock: ManualClock())
    var answers: [String?] = []
    loop.perform({ "done" }, then: { answers.append($0) })
    #expect(!loop.isIdle, "a completion is pending")
    loop.inbox.waitForItems(timeout: 30)
    for item in loop.inbox.drain() {
      if case .completion(let number, let answer) = item { loop.complete(number, answer: answer) }
    }
    #expect(answers == ["done"])
    #expect(loop.isIdle)
  }
}
