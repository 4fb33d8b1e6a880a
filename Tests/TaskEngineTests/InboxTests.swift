// InboxTests: the scheduler's one wait: posts from other threads and a source's descriptors end it.
import Foundation
import Testing

@testable import TaskEngine

/// A descriptor source made of one pipe: what is written to it is posted, as a command's output is.
private final class PipeSource: DescriptorSource {
  let inbox: Inbox
  var fds: [Int32] = [-1, -1]
  var handledOn: [pthread_t] = []
  init(_ inbox: Inbox) {
    self.inbox = inbox
    _ = pipe(&fds)
    inbox.source = self
  }
  deinit { fds.forEach { close($0) } }
  func watch(_ watched: inout [pollfd]) -> Double? {
    watched.append(pollfd(fd: fds[0], events: Int16(POLLIN), revents: 0))
    return nil
  }
  func handle(_ watched: [pollfd], from first: Int) {
    guard watched[first].revents != 0 else { return }
    var byte: UInt8 = 0
    _ = read(fds[0], &byte, 1)
    handledOn.append(pthread_self())
    inbox.post(.processOutput(token: CommandToken(Int(byte)), stream: .stdout, text: "x\n"))
  }
}

@Suite struct InboxTests {
  @Test func aPostFromAnotherThreadEndsAWait() {
    let inbox = Inbox()
    DispatchQueue.global().asyncAfter(deadline: .now() + 0.05) { inbox.post(.wake) }
    let start = MonotonicClock.seconds()
    inbox.waitForItems(timeout: 30)
    #expect(MonotonicClock.seconds() - start < 10)
    #expect(inbox.drain().count == 1)
  }

  @Test func aWaitWithNothingPostedEndsAtItsTimeout() {
    let inbox = Inbox()
    let start = MonotonicClock.seconds()
    inbox.waitForItems(timeout: 0.05)
    let waited = MonotonicClock.seconds() - start
    #expect(waited >= 0.05 && waited < 10, "waited \(waited) s")
    #expect(inbox.isEmpty)
  }

  @Test func aSourcesDescriptorIsHandledOnTheWaitingThreadAndEndsTheWait() {
    let inbox = Inbox()
    let source = PipeSource(inbox)
    let writeEnd = source.fds[1]
    DispatchQueue.global().asyncAfter(deadline: .now() + 0.05) {
      var byte: UInt8 = 7
      _ = write(writeEnd, &byte, 1)
    }
    inbox.waitForItems(timeout: 30)
    guard case .processOutput(let token, _, _)? = inbox.drain().first else {
      Issue.record("nothing posted")
      return
    }
    #expect(token == CommandToken(7))
    #expect(source.handledOn.count == 1 && pthread_equal(source.handledOn[0], pthread_self()) != 0)
  }

  @Test func watchIfDueLooksAtTheDescriptorsWithoutWaiting() {
    let inbox = Inbox()
    let source = PipeSource(inbox)
    let start = MonotonicClock.seconds()
    inbox.watchIfDue(every: 0)
    #expect(inbox.isEmpty && MonotonicClock.seconds() - start < 5)
    var byte: UInt8 = 3
    _ = write(source.fds[1], &byte, 1)
    inbox.watchIfDue(every: 0)
    #expect(inbox.drain().count == 1)
  }
}
