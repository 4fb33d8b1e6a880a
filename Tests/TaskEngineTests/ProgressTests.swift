// ProgressNode and ProgressContext: Foundation Progress semantics (ported from
// swift-corelibs-foundation's TestProgress), descriptions, and throughput/ETA estimation.
import Testing

@testable import TaskEngine

/// A clock for estimates that only moves when told to.
private final class FakeClock {
  var now = 0.0
  var read: () -> Double { { self.now } }
}

private func close(_ a: Double, _ b: Double, _ tolerance: Double = 1e-9) -> Bool {
  abs(a - b) <= tolerance
}

@Suite struct ProgressTests {
  // MARK: Fractions (TestProgress)

  @Test func totalAndCompletedChangesAffectTheFraction() {
    let context = ProgressContext()
    let parent = ProgressNode(total: 100)
    parent.completed = 50
    #expect(close(parent.fraction, 0.5))
    parent.completed = 0

    context.becomeCurrent(parent, pending: 10)
    let child = context.makeNode(total: 100)
    child.completed = 50
    #expect(close(parent.fraction, 0.05))
    #expect(close(child.fraction, 0.5))

    // More work in the parent: the child's 10 units are a smaller share.
    parent.total = 200
    #expect(close(parent.fraction, 0.5 * 10 / 200))
    #expect(close(child.fraction, 0.5))

    // More work in the child.
    child.total = 200
    #expect(close(child.fraction, 50.0 / 200))
    #expect(close(parent.fraction, (50.0 / 200) * (10.0 / 200)))

    // And back.
    child.total = 100
    #expect(close(child.fraction, 0.5))
    #expect(close(parent.fraction, 0.5 * (10.0 / 200)))
    #expect(context.resignCurrent())
    // A child attached, so resigning adds nothing.
    #expect(parent.completed == 0)
  }

  @Test func onlyTheFirstImplicitChildAttaches() {
    let context = ProgressContext()
    let progress = ProgressNode(total: 100)
    context.becomeCurrent(progress, pending: 100)
    let child1 = context.makeNode(total: 5)
    let child2 = context.makeNode(total: 5)
    #expect(child1.parent === progress)
    #expect(child1.pendingInParent == 100)
    #expect(child2.parent == nil)
    #expect(child2.pendingInParent == 0)
    #expect(progress.fraction == 0)

    child2.completed = 5
    #expect(progress.fraction == 0)
    let child3 = context.makeNode(total: 5)
    #expect(child3.parent == nil)
    #expect(progress.fraction == 0)

    child1.completed = 5
    #expect(close(progress.fraction, 1))
    #expect(progress.isFinished)
    context.resignCurrent()
    #expect(progress.completed == 100)
  }

  @Test func resigningWithoutAChildCompletesThePendingUnits() {
    let context = ProgressContext()
    let parent = ProgressNode(total: 10)
    context.becomeCurrent(parent, pending: 4)
    #expect(context.current === parent)
    #expect(context.resignCurrent())
    #expect(context.current == nil)
    #expect(parent.completed == 4)
    #expect(close(parent.fraction, 0.4))
    // Nothing is current any more: a new node is a root, and resigning again is refused.
    #expect(context.makeNode(total: 1).parent == nil)
    #expect(!context.resignCurrent())
    #expect(parent.completed == 4)
  }

  @Test func contextsAreAStackAndIndependent() {
    let a = ProgressContext()
    let b = ProgressContext()
    let outer = ProgressNode(total: 2)
    let inner = ProgressNode(total: 2)
    a.becomeCurrent(outer, pending: 1)
    #expect(!a.becomeCurrent(outer, pending: 1))  // already current
    a.becomeCurrent(inner, pending: 2)
    #expect(a.current === inner)
    #expect(b.current == nil)
    #expect(b.makeNode(total: 1).parent == nil)  // another coroutine's context sees nothing
    let child = a.makeNode(total: 1)
    #expect(child.parent === inner)
    a.resignCurrent()
    #expect(a.current === outer)
    a.resignCurrent()
    #expect(outer.completed == 1)  // no child attached to outer itself
    #expect(inner.completed == 0)
  }

  @Test func indeterminateChildrenContributeNothing() {
    let context = ProgressContext()
    let parent = ProgressNode(total: 1000)
    context.becomeCurrent(parent, pending: 100)
    let child = context.makeNode(total: 10)
    child.completed = 5
    #expect(close(parent.fraction, 0.05))
    child.completed = -1
    #expect(child.isIndeterminate)
    #expect(parent.fraction == 0)
    #expect(!parent.isIndeterminate)
    child.completed = 10
    #expect(close(parent.fraction, 0.1))
    context.resignCurrent()
  }

  @Test func anIndeterminateChildPullsTheParentBack() {
    let context = ProgressContext()
    let parent = ProgressNode(total: 100)
    context.becomeCurrent(parent, pending: 50)
    let child1 = context.makeNode(total: 2)
    context.resignCurrent()
    context.becomeCurrent(parent, pending: 50)
    let child2 = context.makeNode(total: 2)
    context.resignCurrent()
    #expect(parent.fraction == 0)

    child1.completed = 1
    child2.completed = 1
    #expect(close(parent.fraction, 0.5))
    child1.completed = -1
    #expect(close(parent.fraction, 0.25))
    child1.completed = 1
    #expect(close(parent.fraction, 0.5))
  }

  @Test func finishedChildrenMoveTheirPendingIntoCompleted() {
    let root = ProgressNode(total: 2)
    let child1 = ProgressNode(total: 1)
    let child2 = ProgressNode(total: 1)
    #expect(root.addChild(child1, pending: 1))
    #expect(root.addChild(child2, pending: 1))
    #expect(root.children.map(ObjectIdentifier.init) == [child1, child2].map(ObjectIdentifier.init))

    child1.completed = 1
    #expect(close(root.fraction, 0.5))
    #expect(root.completed == 1)
    #expect(root.children.count == 1 && root.children[0] === child2)
    #expect(child1.parent === root)  // still its parent, but settled

    child2.completed = 1
    #expect(root.fraction == 1)
    #expect(root.completed == 2)
    #expect(root.isFinished)
    #expect(root.children.isEmpty)
  }

  @Test func aSettledChildNoLongerMovesItsParent() {
    let root = ProgressNode(total: 2)
    let child = ProgressNode(total: 1)
    root.addChild(child, pending: 1)
    child.completed = 1
    child.completed = 0
    child.completed = 1
    #expect(root.completed == 1)
    #expect(close(root.fraction, 0.5))
    // And it cannot be added anywhere else.
    #expect(!ProgressNode(total: 1).addChild(child, pending: 1))
  }

  @Test func explicitChildren() {
    let parent = ProgressNode(total: 100)
    #expect(parent.fraction == 0)
    let child1 = ProgressNode(total: 100)
    parent.addChild(child1, pending: 10)
    child1.completed = 50
    #expect(close(parent.fraction, 0.05))
    child1.completed = 100
    #expect(close(parent.fraction, 0.10))
    #expect(parent.completed == 10)

    let child2 = ProgressNode(total: 100)
    parent.addChild(child2, pending: 90)
    child2.completed = 50
    #expect(close(parent.fraction, 0.10 + 0.9 / 2))
  }

  @Test func aPartlyDoneChildCountsWhenAdded() {
    let parent = ProgressNode(total: 2)
    let child1 = ProgressNode(total: 100)
    parent.addChild(child1, pending: 1)
    child1.completed = 50
    #expect(close(parent.fraction, 0.25))

    let child2 = ProgressNode(total: 100)
    child2.completed = 50
    parent.addChild(child2, pending: 1)
    #expect(close(parent.fraction, 0.5))
  }

  @Test func aFinishedChildCountsAtOnceWhenAdded() {
    let parent = ProgressNode(total: 2)
    let child = ProgressNode(total: 100)
    child.completed = 100
    #expect(parent.addChild(child, pending: 1))
    #expect(close(parent.fraction, 0.5))
    #expect(parent.completed == 1)
    #expect(parent.children.isEmpty)
  }

  @Test func grandchildrenCountExplicitly() {
    let parent = ProgressNode(total: 100)
    let child = ProgressNode(total: 100)
    parent.addChild(child, pending: 100)
    let grandchild = ProgressNode(total: 100)
    child.addChild(grandchild, pending: 100)
    #expect(parent.fraction == 0)
    grandchild.completed = 50
    #expect(close(parent.fraction, 0.5))
    grandchild.completed = 100
    #expect(parent.isFinished && child.isFinished)
    #expect(parent.completed == 100)
  }

  @Test func grandchildrenCountImplicitly() {
    let context = ProgressContext()
    let parent = ProgressNode(total: 100)
    context.becomeCurrent(parent, pending: 100)
    let child = context.makeNode(total: 100)
    context.resignCurrent()
    context.becomeCurrent(child, pending: 100)
    let grandchild = context.makeNode(total: 100)
    context.resignCurrent()
    #expect(parent.fraction == 0)
    grandchild.completed = 50
    #expect(close(parent.fraction, 0.5))
  }

  @Test func mixedExplicitAndImplicitChildren() {
    let context = ProgressContext()
    let third = 1.0 / 3.0
    let parent = ProgressNode(total: 3)
    let child1 = ProgressNode(total: 10)
    let child2 = ProgressNode(total: 10)
    parent.addChild(child1, pending: 1)
    parent.addChild(child2, pending: 1)
    child1.completed = 5
    #expect(close(parent.fraction, third / 2))
    child2.completed = 5
    #expect(close(parent.fraction, third))

    context.becomeCurrent(parent, pending: 1)
    let child3 = context.makeNode(total: 10)
    context.resignCurrent()
    #expect(close(parent.fraction, third))
    child3.completed = 5
    #expect(close(parent.fraction, third / 2 * 3))

    child3.completed = 10
    #expect(child3.isFinished)
    #expect(close(parent.fraction, third + third))
    child2.completed = 10
    #expect(child2.isFinished)
    #expect(close(parent.fraction, third / 2 + 2 * third))
    child1.completed = 10
    #expect(child1.isFinished)
    #expect(parent.fraction == 1)
    #expect(parent.isFinished)
    #expect(parent.completed == parent.total)
  }

  @Test(
    arguments: [
      (-1, -1, true, 0.0), (0, -1, true, 0.0), (1, -1, true, 0.0),
      (-1, 0, true, 0.0), (0, 0, true, 0.0), (1, 0, false, 1.0),
      (-1, 1, true, 0.0), (0, 1, false, 0.0), (1, 1, false, 1.0)
    ] as [(Int64, Int64, Bool, Double)])
  func neverNaN(_ completed: Int64, _ total: Int64, _ indeterminate: Bool, _ fraction: Double) {
    let p = ProgressNode()
    p.completed = completed
    p.total = total
    #expect(p.isIndeterminate == indeterminate)
    #expect(p.fraction == fraction)
  }

  @Test func finishedFollowsFoundation() {
    let p = ProgressNode(total: 0)
    #expect(!p.isFinished)
    p.completed = 1
    #expect(p.isFinished)  // (1, 0): nothing to do and something done
    p.total = 5
    #expect(!p.isFinished)
    p.completed = 7
    #expect(p.isFinished)
    #expect(close(p.fraction, 1.4))  // not clamped, as in Foundation
  }

  @Test func loweringTheTotalCanFinishAChild() {
    let parent = ProgressNode(total: 10)
    let child = ProgressNode(total: 100)
    parent.addChild(child, pending: 10)
    child.completed = 40
    #expect(close(parent.fraction, 0.4))
    child.total = 40
    #expect(parent.completed == 10)
    #expect(parent.children.isEmpty)
    #expect(parent.fraction == 1)
  }

  @Test func childrenOfANodeWithoutTotalDoNotCountUntilItHasOne() {
    let parent = ProgressNode()  // total -1: indeterminate
    let child = ProgressNode(total: 4)
    parent.addChild(child, pending: 10)
    child.completed = 2
    #expect(parent.fraction == 0)
    parent.total = 20
    // The child's share was kept in the parent's units: 0.5 × 10 of 20.
    #expect(close(parent.fraction, 0.25))
  }

  @Test func addChildRefusesSecondParentsAndCycles() {
    let a = ProgressNode(total: 1)
    let b = ProgressNode(total: 1)
    let c = ProgressNode(total: 1)
    #expect(a.addChild(b, pending: 1))
    #expect(!c.addChild(b, pending: 1))
    #expect(b.parent === a)
    #expect(c.children.isEmpty)
    #expect(b.addChild(c, pending: 1))
    #expect(!c.addChild(a, pending: 1))  // a is c's grandparent
    #expect(!a.addChild(a, pending: 1))
    #expect(a.parent == nil)
  }

  @Test func manyChildrenFinishingKeepOrderAndCounts() {
    let root = ProgressNode(total: 100)
    let kids = (0..<100).map { _ in ProgressNode(total: 1) }
    for kid in kids { root.addChild(kid, pending: 1) }
    for (i, kid) in kids.enumerated() where i % 3 != 1 { kid.completed = 1 }
    let left = kids.enumerated().filter { $0.offset % 3 == 1 }.map { ObjectIdentifier($0.element) }
    #expect(root.children.map(ObjectIdentifier.init) == left)
    #expect(root.childCount == left.count)
    #expect(root.completed == Int64(100 - left.count))
    for kid in root.children { kid.completed = 1 }
    #expect(root.isFinished)
    #expect(root.childCount == 0)
  }

  // MARK: Lifetimes

  @Test func aChildWhoseParentIsGoneIsARootAgain() {
    let orphan = ProgressNode(total: 2)
    do {
      let parent = ProgressNode(total: 1)
      parent.addChild(orphan, pending: 1)
      #expect(orphan.parent === parent)
      #expect(orphan.pendingInParent == 1)
    }
    #expect(orphan.parent == nil)  // like a weak reference
    #expect(orphan.pendingInParent == 0)
    orphan.completed = 2  // reaches nothing
    // Free to be added again: finished, it counts at once.
    let other = ProgressNode(total: 1)
    #expect(other.addChild(orphan, pending: 1))
    #expect(other.completed == 1)
    #expect(orphan.parent === other)
  }

  @Test func nodesOnlyTheTreeHoldsStayUsable() {
    let root = ProgressNode(total: 1)
    var changes = 0
    root.onChange = { _ in changes += 1 }
    let leaf = ProgressNode(total: 1)
    do {
      let mid = ProgressNode(total: 1)  // after this block only root holds it
      root.addChild(mid, pending: 1)
      mid.addChild(leaf, pending: 1)
    }
    changes = 0
    leaf.completed = 1  // settles mid into root, which lets go of it
    #expect(changes == 1)
    #expect(root.isFinished && root.children.isEmpty)
    // A settled node keeps its parent alive, so `parent` still answers.
    #expect(leaf.parent?.parent === root)
  }

  @Test func handlersMayDropTheTreeWhileAnUpdateBubbles() {
    var holder: ProgressNode? = ProgressNode(total: 1)
    let leaf = ProgressNode(total: 10)
    do {
      let mid = ProgressNode(total: 1)
      holder?.addChild(mid, pending: 1)
      mid.addChild(leaf, pending: 1)
      mid.onChange = { _ in Issue.record("mid outlived its only owner") }
    }
    var calls = 0
    leaf.onChange = { _ in
      calls += 1
      holder = nil  // frees root, and with it mid
    }
    leaf.completed = 5
    #expect(calls == 1)
    #expect(leaf.parent == nil)
    leaf.completed = 6
    #expect(calls == 2)
  }

  // MARK: Cancel, pause, resume

  @Test func handlersFireOncePerNodeAndPropagate() {
    var log: [String] = []
    let parent = ProgressNode(total: 2)
    let child = ProgressNode(total: 1)
    let grandchild = ProgressNode(total: 1)
    parent.addChild(child, pending: 1)
    child.addChild(grandchild, pending: 1)
    for (name, node) in [("parent", parent), ("child", child), ("grandchild", grandchild)] {
      node.onCancel = { log.append("cancel \(name)") }
      node.onPause = { log.append("pause \(name)") }
      node.onResume = { log.append("resume \(name)") }
    }

    parent.resume()  // nothing is paused: no handler
    #expect(log.isEmpty)

    parent.pause()
    #expect(log == ["pause parent", "pause child", "pause grandchild"])
    #expect(grandchild.isPaused)
    log.removeAll()
    parent.pause()  // already paused
    #expect(log.isEmpty)

    parent.resume()
    #expect(log == ["resume parent", "resume child", "resume grandchild"])
    #expect(!grandchild.isPaused)
    log.removeAll()

    parent.cancel()
    #expect(log == ["cancel parent", "cancel child", "cancel grandchild"])
    #expect(parent.isCancelled && child.isCancelled && grandchild.isCancelled)
    log.removeAll()
    parent.cancel()
    child.cancel()
    #expect(log.isEmpty)  // permanent, fires once
  }

  @Test func cancellingAChildLeavesItsParentAlone() {
    let parent = ProgressNode(total: 2)
    let child = ProgressNode(total: 1)
    parent.addChild(child, pending: 1)
    child.cancel()
    #expect(child.isCancelled)
    #expect(!parent.isCancelled)
  }

  @Test func settingAHandlerOnACancelledOrPausedNodeFiresIt() {
    let node = ProgressNode(total: 1)
    node.cancel()
    node.pause()
    var fired: [String] = []
    node.onCancel = { fired.append("cancel") }
    node.onPause = { fired.append("pause") }
    node.onResume = { fired.append("resume") }
    #expect(fired == ["cancel", "pause"])
  }

  @Test func childrenAddedToACancelledOrPausedParentFollowIt() {
    let parent = ProgressNode(total: 2)
    parent.cancel()
    parent.pause()
    var fired: [String] = []
    let child = ProgressNode(total: 1)
    child.onCancel = { fired.append("cancel") }
    child.onPause = { fired.append("pause") }
    parent.addChild(child, pending: 1)
    #expect(child.isCancelled && child.isPaused)
    #expect(fired == ["cancel", "pause"])

    let context = ProgressContext()
    context.becomeCurrent(parent, pending: 1)
    let implicit = context.makeNode(total: 1)
    context.resignCurrent()
    #expect(implicit.isCancelled && implicit.isPaused)
  }

  @Test func finishedChildrenAreNotCancelledWithTheirParent() {
    let parent = ProgressNode(total: 2)
    let done = ProgressNode(total: 1)
    parent.addChild(done, pending: 1)
    done.completed = 1
    parent.cancel()
    #expect(parent.isCancelled)
    #expect(!done.isCancelled)
  }

  // MARK: Change notification

  @Test func onChangeBubblesWithTheNodeThatChanged() {
    let root = ProgressNode(total: 1)
    let mid = ProgressNode(total: 1)
    let leaf = ProgressNode(total: 10)
    root.addChild(mid, pending: 1)
    mid.addChild(leaf, pending: 1)
    var seen: [String] = []
    let names = [ObjectIdentifier(root): "root", ObjectIdentifier(mid): "mid", ObjectIdentifier(leaf): "leaf"]
    for node in [root, mid, leaf] {
      let name = names[ObjectIdentifier(node)]!
      node.onChange = { changed in
        // Counts are consistent up the whole path when the handlers run.
        seen.append("\(name)<-\(names[ObjectIdentifier(changed)]!) \(Int(root.fraction * 100))")
      }
    }
    leaf.completed = 5
    #expect(seen == ["leaf<-leaf 50", "mid<-leaf 50", "root<-leaf 50"])
    seen.removeAll()
    leaf.completed = 5  // no change
    #expect(seen.isEmpty)
    leaf.description = "Working"
    #expect(seen == ["leaf<-leaf 50", "mid<-leaf 50", "root<-leaf 50"])
    seen.removeAll()
    mid.cancel()
    // A cancel is a change of each node it reaches, told to that node only (bubbling it up
    // made Ctrl-C through 100,000 nested groups quadratic).
    #expect(seen == ["mid<-mid 50", "leaf<-leaf 50"])
    seen.removeAll()
    // Finishing settles the leaf: this change still reaches its ancestors, later ones do not.
    leaf.completed = 10
    #expect(seen == ["leaf<-leaf 100", "mid<-leaf 100", "root<-leaf 100"])
    seen.removeAll()
    leaf.fileURL = "x"
    #expect(seen == ["leaf<-leaf 100"])
  }

  @Test func addingAChildNotifiesTheParentPath() {
    let root = ProgressNode(total: 2)
    var changes: [ObjectIdentifier] = []
    root.onChange = { changes.append(ObjectIdentifier($0)) }
    let child = ProgressNode(total: 4)
    child.completed = 2
    root.addChild(child, pending: 1)
    #expect(changes == [ObjectIdentifier(root)])
    #expect(close(root.fraction, 0.25))
  }

  @Test func aMillionUpdatesEndInTheRightState() {
    let root = ProgressNode(total: 2)
    let mid = ProgressNode(total: 1)
    let leaf = ProgressNode(total: 1_000_000)
    let other = ProgressNode(total: 1)
    root.addChild(mid, pending: 1)
    root.addChild(other, pending: 1)
    mid.addChild(leaf, pending: 1)
    var calls = 0
    root.onChange = { _ in calls += 1 }
    for i in 1...999_999 { leaf.completed = Int64(i) }
    #expect(calls == 999_999)
    #expect(close(root.fraction, 0.5 * 999_999 / 1_000_000))
    #expect(!root.isFinished && root.completed == 0)
    leaf.completed = 1_000_000
    #expect(leaf.isFinished && mid.isFinished)
    #expect(root.completed == 1)
    #expect(root.children.count == 1 && root.children[0] === other)
    #expect(close(root.fraction, 0.5))
  }

  // MARK: Descriptions

  @Test func defaultDescriptions() {
    let p = ProgressNode(total: 6)
    p.completed = 3
    #expect(p.localizedDescription == "50% completed")
    #expect(p.localizedAdditionalDescription == "3 of 6")
    p.total = 100
    p.completed = 29
    #expect(p.localizedDescription == "29% completed")  // not 28 from 0.29 × 100
    p.completed = 999
    p.total = 1000
    #expect(p.localizedDescription == "99% completed")  // rounded down
    p.total = 2_000_000
    p.completed = 1_234
    #expect(p.localizedAdditionalDescription == "1,234 of 2,000,000")
    p.description = "Importing"
    p.additionalDescription = "step 2"
    #expect(p.localizedDescription == "Importing")
    #expect(p.localizedAdditionalDescription == "step 2")
    p.description = nil
    #expect(p.localizedDescription == "0% completed")

    let unknown = ProgressNode()
    #expect(unknown.localizedDescription == "")
    #expect(unknown.localizedAdditionalDescription == "")
  }

  @Test func theParentPercentIncludesChildren() {
    let parent = ProgressNode(total: 4)
    let child = ProgressNode(total: 2)
    parent.addChild(child, pending: 2)
    child.completed = 1
    #expect(parent.localizedDescription == "25% completed")
    #expect(parent.localizedAdditionalDescription == "0 of 4")
  }

  @Test(
    arguments: [
      (0, "Zero KB"), (1, "1 byte"), (999, "999 bytes"), (1_000, "1 KB"), (1_499, "1 KB"),
      (419_000, "419 KB"), (999_499, "999 KB"), (999_999, "1 MB"), (5_300_000, "5.3 MB"),
      (5_250_000, "5.2 MB"), (789_100_000, "789.1 MB"), (1_610_000_000, "1.61 GB"),
      (3_000_000_000, "3 GB"), (103_920_000_000, "103.92 GB"), (1_500_000_000_000, "1.5 TB"),
      (-2_000, "-2 KB")
    ] as [(Int64, String)])
  func byteCounts(_ bytes: Int64, _ text: String) {
    #expect(ProgressFormat.bytes(bytes) == text)
  }

  @Test(
    arguments: [
      (0.2, "1 second"), (5, "5 seconds"), (59.6, "1 minute"), (60, "1 minute"),
      (97, "1 minute, 37 seconds"), (3_600, "1 hour"), (3_725, "1 hour, 2 minutes"),
      (7_260, "2 hours, 1 minute"), (90_000, "1 day, 1 hour"), (172_800, "2 days")
    ] as [(Double, String)])
  func durations(_ seconds: Double, _ text: String) {
    #expect(ProgressFormat.duration(seconds) == text)
  }

  @Test func fileDescriptions() {
    let p = ProgressNode(total: 5_300_000, kind: .file)
    #expect(p.localizedDescription == "0% completed")  // no operation: the percent
    #expect(p.localizedAdditionalDescription == "Zero KB of 5.3 MB")
    p.completed = 419_000
    #expect(p.localizedAdditionalDescription == "419 KB of 5.3 MB")

    p.fileOperation = .downloading
    #expect(p.localizedDescription == "Downloading…")
    p.fileTotalCount = 9
    #expect(p.localizedDescription == "Downloading 9 files…")
    p.fileTotalCount = 1
    #expect(p.localizedDescription == "Downloading 1 file…")
    p.fileURL = "file:///tmp/My%20Report.pdf"
    #expect(p.localizedDescription == "Downloading “My Report.pdf”…")
    p.fileOperation = .copying
    p.fileURL = "/var/data/archive.tar.gz"
    p.fileTotalCount = nil
    #expect(p.localizedDescription == "Copying “archive.tar.gz”…")
    p.fileOperation = .decompressing
    p.fileTotalCount = 3
    #expect(p.localizedDescription == "Decompressing 3 files…")

    p.throughput = 50_300  // 4,881,000 bytes left: 97 s
    #expect(p.localizedAdditionalDescription == "419 KB of 5.3 MB (50 KB/sec) — About 1 minute, 37 seconds remaining")
    p.estimatedTimeRemaining = 120
    #expect(p.localizedAdditionalDescription == "419 KB of 5.3 MB (50 KB/sec) — About 2 minutes remaining")
    p.throughput = nil
    #expect(p.localizedAdditionalDescription == "419 KB of 5.3 MB — About 2 minutes remaining")
    p.completed = 5_300_000
    #expect(p.localizedAdditionalDescription == "5.3 MB of 5.3 MB")  // finished: no time left

    let counts = ProgressNode(kind: .file)
    counts.fileTotalCount = 10
    counts.fileCompletedCount = 3
    #expect(counts.localizedAdditionalDescription == "3 of 10 files")
    let stream = ProgressNode(kind: .file)
    stream.throughput = 1_000
    stream.estimatedTimeRemaining = 60
    #expect(stream.localizedAdditionalDescription == "About 1 minute remaining (1 KB/sec)")
    stream.completed = 2_500_000
    #expect(stream.localizedAdditionalDescription == "2.5 MB (1 KB/sec) — About 1 minute remaining")
  }

  @Test func theETAIsComputedFromAGivenThroughput() {
    let p = ProgressNode(total: 1_000, kind: .file)
    #expect(p.estimatedTimeRemaining == nil)  // no clock, no throughput
    p.completed = 250
    p.throughput = 50
    #expect(p.estimatedTimeRemaining == 15)
    p.completed = 1_000
    #expect(p.estimatedTimeRemaining == 0)
  }

  // MARK: Estimation

  @Test func aPausedFileSaysPausedAndItsRateRestartsOnResume() throws {
    let clock = FakeClock()
    let p = ProgressNode(total: 10_000, kind: .file)
    p.clock = clock.read
    clock.now = 1
    p.completed = 1_000
    clock.now = 2
    p.completed = 2_000
    #expect(p.throughput == 1_000)
    p.pause()
    clock.now = 12
    #expect(p.localizedAdditionalDescription == "2 KB of 10 KB — paused", "no stale rate, no ETA")
    #expect(p.throughput == nil && p.estimatedTimeRemaining == nil)
    p.resume()
    #expect(p.throughput == nil, "the rate starts over: ten paused seconds are not averaged in")
    clock.now = 13
    p.completed = 5_000  // 3,000 bytes in the second after the resume
    #expect(p.throughput == 3_000)
    #expect(p.localizedAdditionalDescription == "5 KB of 10 KB (3 KB/sec) — About 2 seconds remaining")
  }

  @Test func throughputIsEstimatedFromTheClock() throws {
    let clock = FakeClock()
    let p = ProgressNode(total: 10_000, kind: .file)
    p.clock = clock.read
    #expect(p.throughput == nil)  // no sample yet

    clock.now = 1
    p.completed = 1_000
    #expect(p.throughput == 1_000)
    #expect(p.estimatedTimeRemaining == 9)
    clock.now = 2
    p.completed = 2_000
    #expect(p.throughput == 1_000)
    #expect(p.estimatedTimeRemaining == 8)
    #expect(p.localizedAdditionalDescription == "2 KB of 10 KB (1 KB/sec) — About 8 seconds remaining")

    // Updates closer than 0.5 s to the last sample do not make one.
    clock.now = 2.1
    p.completed = 2_900
    #expect(p.throughput == 1_000)

    // A burst moves the estimate only part of the way.
    clock.now = 2.5
    p.completed = 7_000
    let rate = try #require(p.throughput)
    #expect(rate > 1_000 && rate < 3_000)
    let burst = 10_000.0  // what the last 0.5 s alone would say
    #expect(rate < burst / 3)

    // An explicit value wins over the estimate; nil brings the estimate back.
    p.throughput = 123
    #expect(p.throughput == 123)
    p.throughput = nil
    #expect(p.throughput == rate)
  }

  @Test func aStallLowersTheEstimateAndRaisesTheETA() throws {
    let clock = FakeClock()
    let p = ProgressNode(total: 10_000)
    p.clock = clock.read
    clock.now = 1
    p.completed = 1_000
    clock.now = 2
    p.completed = 2_000
    let before = try #require(p.estimatedTimeRemaining)
    clock.now = 12  // nothing happened for 10 s
    let rate = try #require(p.throughput)
    #expect(rate > 0 && rate < 100)
    let after = try #require(p.estimatedTimeRemaining)
    #expect(after > before * 10)
    // Reading does not store anything: progress resumes from the same smoothed state.
    clock.now = 2.2
    #expect(p.throughput == 1_000)
  }

  @Test func goingBackwardsStartsANewEstimate() {
    let clock = FakeClock()
    let p = ProgressNode(total: 10_000)
    p.clock = clock.read
    clock.now = 1
    p.completed = 5_000
    #expect(p.throughput == 5_000)
    clock.now = 2
    p.completed = 0  // restarted
    #expect(p.throughput == nil)
    clock.now = 3
    p.completed = 100
    #expect(p.throughput == 100)
  }

  @Test func aClockedParentEstimatesFromItsChildren() {
    let clock = FakeClock()
    let parent = ProgressNode(total: 100)
    parent.clock = clock.read
    let child = ProgressNode(total: 1_000)
    parent.addChild(child, pending: 100)
    clock.now = 1
    child.completed = 100  // 10 of the parent's units
    #expect(parent.throughput.map { close($0, 10) } == true)
    #expect(parent.estimatedTimeRemaining.map { close($0, 9) } == true)
  }
}
