// busted's API rules through the binary, with the fixtures in Tests/TestMode/api: curried
// declarations, declarations without a function, `require "busted"`, and where `finally` and
// `pending` are. Compared with busted itself when it is installed, and asserted on taskrun's
// own output so they run without it.
import Foundation
import TestSupport
import Testing

extension BustedCompatTests {
  static let api = fixtures.appendingPathComponent("api")

  /// The spec's TAP result lines (`ok 1 - name`, `not ok 2 - name`), without their details.
  func tapResults(_ spec: String) throws -> (run: Run, lines: [String]) {
    let run = try Binary.run(["test", "-o", "TAP", spec], in: Self.api)
    let lines = run.stdout.split(separator: "\n").map(String.init).filter {
      $0.hasPrefix("ok ") || $0.hasPrefix("not ok ")
    }
    return (run, lines)
  }

  @Test(.enabled(if: busted != nil, "busted is not installed (apt-get install lua-busted)"))
  func theApiFixturesMatchBustedTestForTestMessagesIncluded() throws {
    let root = Binary.packageRoot
    let compat = Binary.finish(
      try Binary.start(
        ["--messages", "--taskrun", Binary.url.path, "\(Self.api.path)::."], in: root,
        program: root.appendingPathComponent("scripts/compat").path), timeout: 120)
    #expect(compat.status == 0, "\(compat.stdout)\(compat.stderr)")
    #expect(compat.stdout.contains("taskrun: pass 19, fail 1, error 3, pending 3"), "\(compat.stdout)")
    #expect(compat.stdout.hasSuffix("\n1 of 1 suites the same\n"), "\(compat.stdout)")
  }

  @Test func curriedDeclarationsDeclareWithEveryWord() throws {
    let (run, lines) = try tapResults("curried_spec.lua")
    #expect(
      lines == [
        "ok 1 - curried describe it",
        "ok 2 - curried describe spec",
        "ok 3 - curried describe test",
        "ok 4 - curried describe context in a context",
        "ok 5 - curried describe insulate in an insulate",
        "ok 6 - curried describe expose in an expose",
        "not ok 7 - curried describe fails as any test does",
        "ok 8 - after the curried describe every hook and test ran, in busted's order",
        "not ok 9 - a curried hook that fails named before_each"
      ], "every hook ran, each in declaration order; a named hook's error bears its name: \(run.stdout)")
    #expect(run.stdout.contains("curried_spec.lua:27: Expected objects to be equal."))
    #expect(run.stdout.contains("curried_spec.lua:47: broke"))
    #expect(run.stdout.hasSuffix("# 7 passed, 2 failed\n"), "\(run.stdout)")
  }

  @Test func aDeclarationWithoutAFunctionDeclaresNothing() throws {
    let (run, lines) = try tapResults("dropped_spec.lua")
    #expect(
      lines == [
        "ok 1 - declarations without a function pending without a function # SKIP pending",
        "ok 2 - declarations without a function pending with a function # SKIP pending",
        "ok 3 - declarations without a function they returned functions and declared nothing",
        "ok 4 - the function returned declared late"
      ], "it('x') and describe('x') are dropped, pending('x') is not: \(run.stdout)")
    #expect(run.status == 0)
  }

  @Test func requireBustedIsBustedsModule() throws {
    let (run, lines) = try tapResults("module_spec.lua")
    #expect(lines.count == 6 && lines.allSatisfy { $0.hasPrefix("ok ") }, "\(run.stdout)")
    #expect(lines.contains("ok 5 - require \"busted\" unsubscribe(id, channel) removes the subscriber and returns it"))
    #expect(run.stdout.hasSuffix("# 6 passed, 0 failed\n"), "\(run.stdout)")
  }

  @Test func finallyIsATestsAndPendingIsRejectedWhereBustedRejectsIt() throws {
    let (run, lines) = try tapResults("finally_spec.lua")
    #expect(
      lines == [
        "ok 1 - finally and pending a test has finally, and may not declare",
        "ok 2 - finally and pending only the last finally ran",
        "ok 3 - finally and pending pending in a finally raises",
        "ok 4 - finally and pending pending in a test makes it pending # SKIP finally_spec.lua:47: not yet",
        "not ok 5 - finally and pending an error from pending in a finally fails the test",
        "not ok 6 - a hook calling pending before_each",
        "ok 7 - a describe has no finally nor does its body"
      ], "hooks see no finally and may not call pending or declare: \(run.stdout)")
    #expect(run.stdout.contains("finally_spec.lua:51: 'pending' not supported inside current context block"))
    #expect(run.stdout.contains("finally_spec.lua:56: 'pending' not supported inside current context block"))
    #expect(run.stdout.hasSuffix("# 4 passed, 2 failed, 1 skipped\n"), "\(run.stdout)")
  }
}
